//! The ring's protocol: frames go out and come back in order with their reports, nothing is
//! lost or duplicated, nothing deadlocks, and shutdown with items in flight drops each item
//! exactly once. Plain threads normally; every interleaving (up to loom's preemption bound)
//! under `RUSTFLAGS="--cfg loom" cargo test -p switchyard-handoff --release`.

#[cfg(loom)]
use loom::sync::atomic::{AtomicUsize, Ordering};
#[cfg(loom)]
use loom::sync::Arc;
#[cfg(loom)]
use loom::thread;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::Arc;
#[cfg(not(loom))]
use std::thread;

use switchyard_handoff::{ring, Consumer, Work};

fn model(f: impl Fn() + Sync + Send + 'static) {
    #[cfg(loom)]
    {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(f);
    }
    #[cfg(not(loom))]
    for _ in 0..200 {
        f();
    }
}

/// A frame packet: its frame number, and a count of packets dropped.
struct Packet {
    frame: u64,
    drops: Arc<AtomicUsize>,
}

impl Drop for Packet {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn packets(n: usize, drops: &Arc<AtomicUsize>) -> Vec<Packet> {
    (0..n).map(|_| Packet { frame: 0, drops: drops.clone() }).collect()
}

/// The submission thread: reports each frame's number; answers flushes; ends when the
/// frame loop is gone.
fn submission(c: Consumer<Packet, u64>) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        while let Some(w) = c.recv() {
            match w {
                Work::Item(p) => {
                    let frame = p.frame;
                    if !c.done(p, frame) {
                        return;
                    }
                }
                Work::Flush => {
                    if !c.flushed() {
                        return;
                    }
                }
            }
        }
    })
}

#[test]
fn frames_come_back_in_order_and_the_ring_is_reused() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut p, c) = ring(packets(2, &drops), 1);
        let t = submission(c);
        let mut reports = Vec::new();
        for frame in 1..=3 {
            let mut packet = p.take(&mut |r| reports.push(r)).expect("the consumer is there");
            packet.frame = frame;
            assert!(p.send(packet).is_ok());
        }
        assert!(p.flush(&mut |r| reports.push(r)));
        assert_eq!(reports, [1, 2, 3], "each frame once, in order");
        assert_eq!(p.free(), 2, "every packet is back");
        assert_eq!(drops.load(Ordering::SeqCst), 0, "none dropped while in use");
        drop(p);
        t.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 2, "each dropped once at the end");
    });
}

/// The renderer's default sizes: three packets, three frames queued at most (frames in
/// flight 3), four frames and a flush.
#[test]
fn at_the_renderers_default_sizes_frames_come_back_in_order() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut p, c) = ring(packets(3, &drops), 3);
        let t = submission(c);
        let mut reports = Vec::new();
        for frame in 1..=4 {
            let mut packet = p.take(&mut |r| reports.push(r)).expect("the consumer is there");
            packet.frame = frame;
            assert!(p.send(packet).is_ok());
        }
        assert!(p.flush(&mut |r| reports.push(r)));
        assert_eq!(reports, [1, 2, 3, 4], "each frame once, in order");
        assert_eq!(p.free(), 3, "every packet is back");
        drop(p);
        t.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 3, "each dropped once at the end");
    });
}

#[test]
fn shutdown_with_frames_in_flight_drops_each_packet_once() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut p, c) = ring(packets(2, &drops), 1);
        let t = submission(c);
        for frame in 1..=2 {
            let mut packet = p.take(&mut |_| {}).expect("the consumer is there");
            packet.frame = frame;
            assert!(p.send(packet).is_ok());
        }
        // The frame loop goes away with both packets queued or on the submission thread.
        drop(p);
        t.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_consumer_that_is_gone_never_blocks_the_producer() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (mut p, c) = ring::<Packet, u64>(packets(2, &drops), 1);
        let t = thread::spawn(move || drop(c));
        for _ in 0..3 {
            // A packet is free or the consumer is gone; sends fail once it is.
            let Some(packet) = p.take(&mut |_| {}) else { break };
            if let Err(packet) = p.send(packet) {
                p.give_back(packet);
            }
        }
        t.join().unwrap();
        assert!(!p.flush(&mut |_| {}));
        drop(p);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    });
}
