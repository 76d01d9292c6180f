//! Parsing of large counts written the way operators write them: `5e9`, `1000000`,
//! `1_000_000`.

/// Parses a non-negative whole number, allowing scientific notation and `_` separators,
/// up to 1e15.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    if let Ok(n) = cleaned.parse::<u64>() {
        return check(n as f64).map(|_| n);
    }
    let x: f64 = cleaned
        .parse()
        .map_err(|_| format!("not a number: {s:?}"))?;
    check(x)?;
    if x.fract() != 0.0 {
        return Err(format!("not a whole number: {s:?}"));
    }
    Ok(x as u64)
}

fn check(x: f64) -> Result<(), String> {
    if !x.is_finite() || x < 0.0 {
        return Err(format!("out of range: {x}"));
    }
    if x > 1e15 {
        return Err(format!("too large (max 1e15): {x}"));
    }
    Ok(())
}

/// Parses a probability strictly between 0 and 1.
pub fn parse_probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("not a number: {s:?}"))?;
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(format!("must be strictly between 0 and 1: {s}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("5e9"), Ok(5_000_000_000));
        assert_eq!(parse_count("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_count("1.5e3"), Ok(1500));
        assert_eq!(parse_count("0"), Ok(0));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
        assert!(parse_count("1e16").is_err());
        assert!(parse_count("abc").is_err());
        assert!(parse_count("inf").is_err());
    }

    #[test]
    fn probabilities() {
        assert_eq!(parse_probability("1e-3"), Ok(0.001));
        assert!(parse_probability("0").is_err());
        assert!(parse_probability("1").is_err());
    }
}
