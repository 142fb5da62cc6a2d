//! A stand-in Tracy profiler for measuring instrumentation overhead without the Tracy GUI:
//! it performs the client handshake over TCP like the profiler does, then reads and
//! discards the compressed event stream. While it is connected the client records every
//! zone, plot and frame mark and streams them, exactly the work a real capture costs the
//! application; the stand-in only never asks for strings or symbols.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The protocol version of the Tracy client tracy-client-sys 0.29 embeds
/// (`tracy/common/TracyProtocol.hpp`).
pub const PROTOCOL_VERSION: u32 = 82;

/// The client's default listening port.
pub const PORT: u16 = 8086;

/// A connected stand-in profiler; dropping it disconnects.
#[derive(Debug)]
pub struct Drain {
    stream: TcpStream,
    stop: Arc<AtomicBool>,
    bytes: Arc<AtomicU64>,
    reader: Option<JoinHandle<()>>,
}

impl Drain {
    /// Connects to the client on this machine and completes the handshake; waits until
    /// the client reports a connected profiler.
    pub fn connect(timeout: Duration) -> Result<Drain, String> {
        let _ = tracy_client::Client::start();
        let deadline = Instant::now() + timeout;
        let mut stream = loop {
            match TcpStream::connect(("127.0.0.1", PORT)) {
                Ok(s) => break s,
                Err(e) if Instant::now() >= deadline => return Err(format!("tracy client not listening: {e}")),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let mut hello = b"TracyPrf".to_vec();
        hello.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        stream.write_all(&hello).map_err(|e| format!("handshake: {e}"))?;
        let mut status = [0u8; 1];
        stream.read_exact(&mut status).map_err(|e| format!("handshake: {e}"))?;
        match status[0] {
            1 => {}
            2 => return Err("tracy protocol mismatch".into()),
            s => return Err(format!("tracy handshake refused (status {s})")),
        }
        let stop = Arc::new(AtomicBool::new(false));
        let bytes = Arc::new(AtomicU64::new(0));
        let mut rx = stream.try_clone().map_err(|e| e.to_string())?;
        rx.set_read_timeout(Some(Duration::from_millis(50))).map_err(|e| e.to_string())?;
        let (s2, b2) = (stop.clone(), bytes.clone());
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while !s2.load(Ordering::Relaxed) {
                match rx.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        b2.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                    Err(_) => break,
                }
            }
        });
        let drain = Drain { stream, stop, bytes, reader: Some(reader) };
        while !tracy_client::Client::is_connected() {
            if Instant::now() >= deadline {
                return Err("tracy client did not report the connection".into());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(drain)
    }

    /// Bytes of event stream received so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Disconnects and waits until the client notices; returns the bytes received.
    pub fn disconnect(mut self) -> u64 {
        self.close();
        let deadline = Instant::now() + Duration::from_secs(5);
        while tracy_client::Client::is_connected() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.bytes()
    }

    fn close(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.stream.shutdown(Shutdown::Both);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        self.close();
    }
}
