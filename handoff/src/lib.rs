//! The hand-off between Switchyard's frame loop and its submission thread, on its own so a
//! loom model can check it without building the GPU stack.
//!
//! - [`bounded`]: a blocking channel of fixed capacity (a `Mutex`, two `Condvar`s and a
//!   `VecDeque` allocated once). A send blocks while it is full; a receive blocks while it
//!   is empty; either side's drop closes it and wakes the other.
//! - [`ring`]: a fixed set of items (frame packets) that travel from a [`Producer`] (the
//!   frame loop) to a [`Consumer`] (the submission thread) and back with a report, so their
//!   memory is reused for later frames. At most `queued` items wait for the consumer; the
//!   consumer never blocks on the way back (that channel holds every item and a flush
//!   marker), so neither side can wait on the other in a cycle.
//!
//! Under `--cfg loom` the primitives are loom's, and the tests of `tests/ring.rs` explore
//! every interleaving of the ring's protocol (up to a preemption bound), at small sizes and
//! at the renderer's default ones: nothing lost, nothing duplicated, no deadlock, shutdown
//! with items in flight.

#![deny(missing_docs)]

use std::collections::VecDeque;

#[cfg(loom)]
use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    sender: bool,
    receiver: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding the lock leaves the queue consistent (every change is one
        // push or pop), so a poisoned lock is used as is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sending side of [`bounded`].
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving side of [`bounded`].
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sender")
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receiver")
    }
}

/// A channel holding at most `capacity` items (at least 1).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State { queue: VecDeque::with_capacity(capacity), capacity, sender: true, receiver: true }),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    });
    (Sender { shared: shared.clone() }, Receiver { shared })
}

impl<T> Sender<T> {
    /// Sends `item`, waiting while the channel is full. `Err(item)`: the receiver is gone.
    pub fn send(&self, item: T) -> Result<(), T> {
        let mut s = self.shared.lock();
        loop {
            if !s.receiver {
                return Err(item);
            }
            if s.queue.len() < s.capacity {
                s.queue.push_back(item);
                drop(s);
                self.shared.not_empty.notify_one();
                return Ok(());
            }
            s = self.shared.not_full.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting while the channel is empty. `None`: the sender is gone and
    /// everything it sent was received.
    pub fn recv(&self) -> Option<T> {
        let mut s = self.shared.lock();
        loop {
            if let Some(item) = s.queue.pop_front() {
                drop(s);
                self.shared.not_full.notify_one();
                return Some(item);
            }
            if !s.sender {
                return None;
            }
            s = self.shared.not_empty.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The next item if there is one, without waiting.
    pub fn try_recv(&self) -> TryRecv<T> {
        let mut s = self.shared.lock();
        match s.queue.pop_front() {
            Some(item) => {
                drop(s);
                self.shared.not_full.notify_one();
                TryRecv::Item(item)
            }
            None if s.sender => TryRecv::Empty,
            None => TryRecv::Closed,
        }
    }
}

/// What [`Receiver::try_recv`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum TryRecv<T> {
    /// An item.
    Item(T),
    /// Nothing yet; the sender is still there.
    Empty,
    /// Nothing, and the sender is gone.
    Closed,
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.shared.lock().sender = false;
        self.shared.not_empty.notify_all();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Items still queued are dropped with the receiver's side, here, once.
        let left = {
            let mut s = self.shared.lock();
            s.receiver = false;
            std::mem::take(&mut s.queue)
        };
        self.shared.not_full.notify_all();
        drop(left);
    }
}

/// What travels to the consumer.
#[derive(Debug)]
pub enum Work<T> {
    /// An item to process.
    Item(T),
    /// Answer [`Done::Flushed`] once everything before is finished.
    Flush,
}

/// What travels back to the producer.
#[derive(Debug)]
pub enum Done<T, R> {
    /// A processed item and its report.
    Item(T, R),
    /// Everything sent before the flush is finished.
    Flushed,
}

/// The frame loop's side of a [`ring`]: it owns the free items.
pub struct Producer<T, R> {
    to: Sender<Work<T>>,
    back: Receiver<Done<T, R>>,
    free: Vec<T>,
}

impl<T, R> std::fmt::Debug for Producer<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer").field("free", &self.free.len()).finish_non_exhaustive()
    }
}

/// The submission thread's side of a [`ring`].
pub struct Consumer<T, R> {
    from: Receiver<Work<T>>,
    back: Sender<Done<T, R>>,
}

impl<T, R> std::fmt::Debug for Consumer<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Consumer")
    }
}

/// A ring of `items`: at most `queued` of them wait for the consumer at once.
pub fn ring<T, R>(items: Vec<T>, queued: usize) -> (Producer<T, R>, Consumer<T, R>) {
    let (to, from) = bounded(queued);
    // Every item and one flush marker fit: the consumer never waits on the way back.
    let (back_tx, back) = bounded(items.len() + 1);
    (Producer { to, back, free: items }, Consumer { from, back: back_tx })
}

impl<T, R> Producer<T, R> {
    /// Takes back every item that came back, without waiting; `report` sees each report.
    /// `false`: the consumer is gone.
    pub fn collect(&mut self, report: &mut impl FnMut(R)) -> bool {
        loop {
            match self.back.try_recv() {
                TryRecv::Item(done) => self.settle(done, report),
                TryRecv::Empty => return true,
                TryRecv::Closed => return false,
            }
        }
    }

    /// A free item: from the free list, else the next one to come back (waiting for it).
    /// `None`: the consumer is gone with them.
    pub fn take(&mut self, report: &mut impl FnMut(R)) -> Option<T> {
        self.collect(report);
        loop {
            if let Some(item) = self.free.pop() {
                return Some(item);
            }
            let done = self.back.recv()?;
            self.settle(done, report);
        }
    }

    /// Puts an item that was not sent back on the free list.
    pub fn give_back(&mut self, item: T) {
        self.free.push(item);
    }

    /// Sends an item, waiting while `queued` items wait for the consumer. `Err(item)`: the
    /// consumer is gone.
    pub fn send(&mut self, item: T) -> Result<(), T> {
        self.to.send(Work::Item(item)).map_err(|w| match w {
            Work::Item(item) => item,
            Work::Flush => unreachable!("an item was sent"),
        })
    }

    /// Waits until the consumer finished everything sent before; takes back every item.
    /// `false`: the consumer is gone.
    pub fn flush(&mut self, report: &mut impl FnMut(R)) -> bool {
        if self.to.send(Work::Flush).is_err() {
            return false;
        }
        loop {
            match self.back.recv() {
                Some(Done::Flushed) => return true,
                Some(done) => self.settle(done, report),
                None => return false,
            }
        }
    }

    /// Items on the free list.
    pub fn free(&self) -> usize {
        self.free.len()
    }

    /// The items on the free list (to read what the last finished one held).
    pub fn free_items(&self) -> &[T] {
        &self.free
    }

    fn settle(&mut self, done: Done<T, R>, report: &mut impl FnMut(R)) {
        if let Done::Item(item, r) = done {
            self.free.push(item);
            report(r);
        }
    }
}

impl<T, R> Consumer<T, R> {
    /// The next work, waiting for it. `None`: the producer is gone and everything it sent
    /// was received.
    pub fn recv(&self) -> Option<Work<T>> {
        self.from.recv()
    }

    /// Hands a processed item back. `false`: the producer is gone (the item is dropped).
    pub fn done(&self, item: T, report: R) -> bool {
        self.back.send(Done::Item(item, report)).is_ok()
    }

    /// Answers a [`Work::Flush`]. `false`: the producer is gone.
    pub fn flushed(&self) -> bool {
        self.back.send(Done::Flushed).is_ok()
    }
}
