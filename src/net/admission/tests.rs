//! The policy alone: synthetic `Instant`s, a real shared table, no sockets.

use super::*;
use crate::fetch::FetchRequest;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};

const WAIT: Duration = Duration::from_secs(30);
const SERVER: [u8; 4] = [93, 184, 216, 34];

fn key(host: &str) -> PoolKey {
    PoolKey {
        via: 0,
        https: false,
        host: host.into(),
        port: 80,
    }
}

/// The same request over HTTPS (port 443 for the pool key; the address is unchanged).
fn tls(mut j: Job) -> Job {
    j.key.https = true;
    j.key.port = 443;
    j
}

/// A request for `http://{host}/{id}` resolved to `ip`, submitted at `t`.
fn job(id: u64, host: &str, ip: [u8; 4], t: Instant) -> Job {
    let url = url::Url::parse(&format!("http://{host}/{id}")).unwrap();
    let addr = SocketAddr::from((ip, 80));
    Job {
        req: FetchRequest::get(id, url, "test".into()),
        key: key(host),
        wire: Default::default(),
        submitted: t,
        dns: Some(Duration::ZERO),
        addrs: Some(vec![addr].into()),
        addr_index: 0,
        retries: 0,
        fresh_only: false,
        ip_ticket: None,
        ip_wait_since: None,
        ip_waited: Duration::ZERO,
        shared_conn: false,
    }
}

/// An admission with a shared table of `cap` slots per address; counts its wakes.
fn capped(table: &Arc<IpSlots>) -> (Admission, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = Arc::clone(&wakes);
    let a = Admission::new(false, WAIT, Some(Arc::clone(table)), move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    (a, wakes)
}

fn connect(d: Decision) -> (Job, SocketAddr, Option<IpSlot>) {
    match d {
        Decision::Connect { job, addr, slot } => (job, addr, slot),
        Decision::Wait { .. } => panic!("expected connect, got wait"),
        Decision::Reuse(_) => panic!("expected connect, got reuse"),
        Decision::Fail { reason, .. } => panic!("expected connect, got {reason:?}"),
    }
}

fn fail_reason(d: Decision) -> (u64, Option<SocketAddr>, FailReason) {
    match d {
        Decision::Fail { job, peer, reason } => (job.req.id, peer, reason),
        _ => panic!("expected a failure"),
    }
}

fn conn_key(n: usize) -> SlotKey {
    SlotKey::from_token(mio::Token(n))
}

#[test]
fn without_a_cap_every_request_connects_at_once() {
    let t0 = Instant::now();
    let mut a = Admission::new(false, WAIT, None, || {});
    for id in 0..100 {
        let (job, addr, slot) = connect(a.admit(job(id, "a.test", SERVER, t0), t0));
        assert_eq!(job.req.id, id);
        assert_eq!(addr, SocketAddr::from((SERVER, 80)));
        assert!(slot.is_none());
    }
    assert_eq!(a.waiting_len(), 0);
    assert_eq!(a.take_notices(), Notices::default());
}

#[test]
fn blocked_addresses_fail_before_taking_a_slot() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (id, peer, reason) = fail_reason(a.admit(job(7, "lo.test", [127, 0, 0, 1], t0), t0));
    assert_eq!(id, 7);
    assert_eq!(peer, Some(SocketAddr::from(([127, 0, 0, 1], 80))));
    assert!(matches!(reason, FailReason::BlockedAddress));
    assert_eq!(table.open_total(), 0, "a refused address holds no slot");
    // The operator's opt-in lets it through.
    let mut open = Admission::new(true, WAIT, Some(Arc::clone(&table)), || {});
    let (_, _, slot) = connect(open.admit(job(8, "lo.test", [127, 0, 0, 1], t0), t0));
    assert!(slot.is_some());
    assert_eq!(table.open(IpAddr::V4(Ipv4Addr::LOCALHOST)), 1);
}

#[test]
fn a_request_without_an_address_fails_as_dns() {
    let t0 = Instant::now();
    let mut a = Admission::new(false, WAIT, None, || {});
    let mut j = job(1, "a.test", SERVER, t0);
    j.addr_index = 1; // past the only address
    let (_, peer, reason) = fail_reason(a.admit(j, t0));
    assert!(peer.is_none());
    assert!(matches!(reason, FailReason::Dns(DnsFailure::NoAddress)));
}

#[test]
fn at_the_cap_requests_wait_and_arm_one_deadline() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    assert!(held.is_some());
    let t1 = t0 + Duration::from_secs(1);
    match a.admit(job(2, "b.test", SERVER, t1), t1) {
        Decision::Wait { first, timer, .. } => {
            assert!(first);
            assert_eq!(timer, Some(t1 + WAIT));
        }
        _ => panic!("expected a wait"),
    }
    // A later waiter's deadline is later: no new timer entry.
    let t2 = t0 + Duration::from_secs(2);
    assert!(matches!(
        a.admit(job(3, "c.test", SERVER, t2), t2),
        Decision::Wait {
            first: true,
            timer: None,
            ..
        }
    ));
    assert_eq!(a.waiting_len(), 2);
    assert_eq!(a.timer_at(), Some(t1 + WAIT));
    assert_eq!(table.waiting(IpAddr::from(SERVER)), 2);
}

#[test]
fn a_freed_slot_wakes_the_waiter_and_it_goes_in_ticket_order() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, wakes) = capped(&table);
    let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    for id in 2..=4 {
        let t = t0 + Duration::from_secs(id);
        assert!(matches!(
            a.admit(job(id, "b.test", SERVER, t), t),
            Decision::Wait { .. }
        ));
    }
    assert_eq!(wakes.load(Ordering::SeqCst), 0);
    assert_eq!(
        a.next_waiting(IpAddr::from(SERVER), t0, |_| false)
            .map(|_| ()),
        None
    );
    drop(held);
    assert_eq!(wakes.load(Ordering::SeqCst), 1, "the release woke the loop");
    let notices = a.take_notices();
    assert_eq!(notices.ready, vec![IpAddr::from(SERVER)]);
    let t10 = t0 + Duration::from_secs(10);
    let (j, _, slot) = connect(
        a.next_waiting(IpAddr::from(SERVER), t10, |_| false)
            .unwrap(),
    );
    assert_eq!(j.req.id, 2, "first come, first served");
    assert_eq!(j.ip_waited, Duration::from_secs(8), "waited from t2 to t10");
    assert!(j.ip_ticket.is_none());
    // Only one slot: the next waiter stays put until it frees.
    assert!(a
        .next_waiting(IpAddr::from(SERVER), t10, |_| false)
        .is_none());
    drop(slot);
    let (j, _, _) = connect(
        a.next_waiting(IpAddr::from(SERVER), t10, |_| false)
            .unwrap(),
    );
    assert_eq!(j.req.id, 3);
    assert_eq!(a.waiting_len(), 1);
}

#[test]
fn a_waiter_whose_host_has_an_idle_connection_reuses_it_and_passes_the_turn() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    assert!(matches!(
        a.admit(job(2, "a.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    assert!(matches!(
        a.admit(job(3, "b.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    let t5 = t0 + Duration::from_secs(5);
    let idle_host = key("a.test");
    match a.next_waiting(IpAddr::from(SERVER), t5, |k| *k == idle_host) {
        Some(Decision::Reuse(j)) => {
            assert_eq!(j.req.id, 2);
            assert!(
                j.ip_ticket.is_none(),
                "leaving the queue gives the ticket up"
            );
            assert_eq!(j.ip_waited, Duration::from_secs(5));
        }
        _ => panic!("expected a reuse"),
    }
    assert_eq!(table.waiting(IpAddr::from(SERVER)), 1);
    drop(held);
    let (j, _, _) = connect(a.next_waiting(IpAddr::from(SERVER), t5, |_| false).unwrap());
    assert_eq!(j.req.id, 3);
}

#[test]
fn waits_expire_after_the_bound_counted_from_their_start() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, _held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    let t10 = t0 + Duration::from_secs(10);
    assert!(matches!(
        a.admit(job(2, "b.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    assert!(matches!(
        a.admit(job(3, "c.test", SERVER, t10), t10),
        Decision::Wait { .. }
    ));
    // A stale entry (not the armed deadline) does nothing.
    let (fails, next) = a.expire(t0 + Duration::from_secs(1), t0 + WAIT);
    assert!(fails.is_empty() && next.is_none());
    assert_eq!(a.waiting_len(), 2);
    let (fails, next) = a.expire(t0 + WAIT, t0 + WAIT);
    assert_eq!(fails.len(), 1);
    let mut fails = fails.into_iter();
    let (id, _, reason) = fail_reason(fails.next().unwrap());
    assert_eq!(id, 2);
    assert!(matches!(reason, FailReason::Timeout(TimeoutPhase::Queue)));
    assert_eq!(
        next,
        Some(t10 + WAIT),
        "the next deadline is the survivor's"
    );
    assert_eq!(a.timer_at(), next);
    assert_eq!(a.waiting_len(), 1);
    assert_eq!(
        table.waiting(IpAddr::from(SERVER)),
        1,
        "the ticket left the table"
    );
}

#[test]
fn a_request_waiting_again_keeps_its_start_and_is_counted_once() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, _held) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    let mut j = job(2, "b.test", SERVER, t0);
    j.ip_wait_since = Some(t0);
    assert!(matches!(
        a.admit(j, t0 + Duration::from_secs(3)),
        Decision::Wait {
            first: false,
            timer: Some(t),
            ..
        } if t == t0 + WAIT
    ));
}

#[test]
fn an_idle_connection_is_pooled_when_nobody_waits() {
    let t0 = Instant::now();
    let table = IpSlots::new(2);
    let (mut a, _) = capped(&table);
    let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    let mut streak = 5;
    let r = a.on_idle(
        conn_key(1),
        &key("a.test"),
        IpAddr::from(SERVER),
        slot.as_mut(),
        &mut streak,
        &|_| true,
        t0,
    );
    assert!(matches!(r, Release::Pool));
    assert_eq!(
        streak, 0,
        "the streak counts contended reuses in a row only"
    );
    assert!(!a.in_grace(conn_key(1)));
}

#[test]
fn a_contended_idle_connection_gets_one_turn_then_a_bounded_streak() {
    // HTTPS, and a.test's certificate does not cover b.test: the connection cannot
    // carry b.test's request.
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, mut slot) = connect(a.admit(tls(job(1, "a.test", SERVER, t0)), t0));
    assert!(matches!(
        a.admit(tls(job(2, "b.test", SERVER, t0)), t0),
        Decision::Wait { .. }
    ));
    let a_key = tls(job(1, "a.test", SERVER, t0)).key;
    let mut streak = 0;
    for round in 1..=MAX_CONTENDED_REUSES {
        let r = a.on_idle(
            conn_key(1),
            &a_key,
            IpAddr::from(SERVER),
            slot.as_mut(),
            &mut streak,
            &|_| false,
            t0,
        );
        assert!(matches!(r, Release::PoolOneTurn), "round {round}");
        assert!(a.in_grace(conn_key(1)));
        assert_eq!(a.take_yield_soon(), vec![conn_key(1)]);
        assert!(still_wanted(slot.as_mut()), "b.test still waits");
        if let Some(s) = slot.as_mut() {
            s.set_idle(false); // its host reused it
        }
    }
    let r = a.on_idle(
        conn_key(1),
        &a_key,
        IpAddr::from(SERVER),
        slot.as_mut(),
        &mut streak,
        &|_| false,
        t0,
    );
    assert!(
        matches!(r, Release::Close),
        "the 17th contended reuse yields"
    );
}

#[test]
fn a_contended_idle_connection_serves_a_waiter_of_its_own_host() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    assert!(matches!(
        a.admit(job(2, "b.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    assert!(matches!(
        a.admit(job(3, "a.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    let mut streak = 0;
    let t4 = t0 + Duration::from_secs(4);
    match a.on_idle(
        conn_key(1),
        &key("a.test"),
        IpAddr::from(SERVER),
        slot.as_mut(),
        &mut streak,
        &|_| true,
        t4,
    ) {
        Release::Serve(j) => {
            assert_eq!(j.req.id, 3, "the same host's request, not b.test's");
            assert_eq!(j.ip_waited, Duration::from_secs(4));
        }
        _ => panic!("expected serve"),
    }
    assert_eq!(a.waiting_len(), 1);
    assert_eq!(table.waiting(IpAddr::from(SERVER)), 1);
}

#[test]
fn a_plain_http_connection_serves_a_waiter_of_another_host_on_its_address() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut a, _) = capped(&table);
    let (_, _, mut slot) = connect(a.admit(job(1, "a.test", SERVER, t0), t0));
    assert!(matches!(
        a.admit(tls(job(2, "t.test", SERVER, t0)), t0),
        Decision::Wait { .. }
    ));
    assert!(matches!(
        a.admit(job(3, "b.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    let mut streak = 0;
    match a.on_idle(
        conn_key(1),
        &key("a.test"),
        IpAddr::from(SERVER),
        slot.as_mut(),
        &mut streak,
        &|_| true,
        t0,
    ) {
        Release::Serve(j) => assert_eq!(j.req.id, 3, "b.test's, not the https request"),
        _ => panic!("expected serve"),
    }
    assert_eq!(a.waiting_len(), 1);
    assert!(can_share(&key("a.test"), &key("b.test")));
    assert!(!can_share(
        &key("a.test"),
        &tls(job(2, "t.test", SERVER, t0)).key
    ));
}

#[test]
fn a_wait_asks_other_fetchers_to_close_their_idle_connections() {
    let t0 = Instant::now();
    let table = IpSlots::new(1);
    let (mut holder, holder_wakes) = capped(&table);
    let (mut waiter, _) = capped(&table);
    let (_, _, mut slot) = connect(holder.admit(job(1, "a.test", SERVER, t0), t0));
    let mut streak = 0;
    let r = holder.on_idle(
        conn_key(1),
        &key("a.test"),
        IpAddr::from(SERVER),
        slot.as_mut(),
        &mut streak,
        &|_| true,
        t0,
    );
    assert!(matches!(r, Release::Pool));
    assert!(matches!(
        waiter.admit(job(2, "b.test", SERVER, t0), t0),
        Decision::Wait { .. }
    ));
    assert_eq!(holder_wakes.load(Ordering::SeqCst), 1);
    assert_eq!(holder.take_notices().evict, vec![IpAddr::from(SERVER)]);
    drop(slot); // the holder closed it
    assert_eq!(waiter.take_notices().ready, vec![IpAddr::from(SERVER)]);
    let (j, _, _) = connect(
        waiter
            .next_waiting(IpAddr::from(SERVER), t0, |_| false)
            .unwrap(),
    );
    assert_eq!(j.req.id, 2);
}
