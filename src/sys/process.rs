//! Process-wide settings: the open-files limit and SIGPIPE's action.
#![allow(
    unsafe_code,
    reason = "libc::signal has no safe wrapper in std; the OS seam (src/sys), see docs/safety.md"
)]

use std::io;

/// Raises the soft `RLIMIT_NOFILE` towards `wanted` (at most the hard limit) and
/// returns the soft limit now in force (through the rlimit crate, which has no
/// `unsafe` of ours).
///
/// # Errors
/// `getrlimit` or `setrlimit` failed.
pub fn raise_open_files_limit(wanted: u64) -> io::Result<u64> {
    rlimit::increase_nofile_limit(wanted)
}

/// Restores the default action for SIGPIPE, as a C command-line tool has: Rust starts
/// programs with SIGPIPE ignored, so `trawl plan | head -1` (or `trawl links ... |
/// head`) got EPIPE on its next write and `println!` panicked. With the default action
/// the process simply ends when its reader goes away.
///
/// Call it first thing in `main`, before any thread starts: it changes the whole
/// process.
pub fn restore_default_sigpipe() {
    // SAFETY: called first thing in `main`, before any thread exists, with a valid signal
    // number and the `SIG_DFL` disposition; no Rust handler is replaced or relied on.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};

    use super::*;

    const CHILD: &str = "TRAWL_SYS_SIGPIPE_CHILD";

    /// Covers the `signal` call. It changes the whole process, so the test runs itself
    /// again as a child: there, with the default action, a write to a pipe whose
    /// reader is gone ends the process by SIGPIPE instead of returning EPIPE.
    #[test]
    fn restored_sigpipe_ends_a_writer_to_a_closed_pipe() {
        if std::env::var_os(CHILD).is_some() {
            restore_default_sigpipe();
            // A pipe whose reader has exited.
            let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
            let mut pipe = reader.stdin.take().unwrap();
            reader.wait().unwrap();
            let _ = pipe.write_all(b"x");
            // Reached only when SIGPIPE was still ignored.
            std::process::exit(0);
        }
        let status = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sys::process::tests::restored_sigpipe_ends_a_writer_to_a_closed_pipe",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
    }

    /// The limit returned is in force, and never below what the process had.
    #[test]
    fn open_files_limit_is_raised_not_lowered() {
        let (soft, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        let now = raise_open_files_limit(u64::MAX).unwrap();
        assert!(now >= soft && now <= hard, "{soft} <= {now} <= {hard}");
        assert_eq!(rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap().0, now);
    }
}
