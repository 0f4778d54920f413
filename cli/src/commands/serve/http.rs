//! The playground's HTTP/1.1 server: blocking, a thread a connection, httparse for the request
//! head. What a slow or hostile client can hold is bounded:
//!
//! - **Time.** A request's head must arrive within the timeout of its first byte being awaited
//!   (an idle kept-alive connection is closed then), and its body at no less than
//!   [`MIN_RATE`] after that: one byte a second is answered 408 and closed, never waited on.
//! - **Connections.** At most [`Limits::connections`] at once, each its own thread; one more is
//!   answered 503 at once. Connections only read and write: the engines answering them are a
//!   pool of their own (`engines.rs`), so a client that stalls holds its thread alone.
//! - **Size.** The head at most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] lines (431); the body
//!   at most [`Limits::max_body`] (413), refused by its declared length before any of it is
//!   read. Two `Content-Length` headers that differ, or one beside `Transfer-Encoding`, are a
//!   400: which one the body follows is ambiguous (request smuggling).
//!
//! Bodies come with `Content-Length` or `Transfer-Encoding: chunked`; `Expect: 100-continue` is
//! honoured. Connections are kept alive as HTTP/1.1 says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::shared::Reply;

/// The largest request head (request line and headers), in bytes.
pub const MAX_HEAD: usize = 16 << 10;
/// The most header lines of a request.
pub const MAX_HEADERS: usize = 64;
/// The slowest a body may arrive, in bytes a second, once the timeout is spent.
pub const MIN_RATE: u64 = 1 << 20;

/// What the server allows a client.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest body, in bytes.
    pub max_body: u64,
    /// How long a request's head may take, and its body before [`MIN_RATE`] applies.
    pub timeout: Duration,
    /// The most connections served at once.
    pub connections: usize,
}

/// A request, read whole.
pub struct Request {
    pub method: String,
    /// The target as sent: the path and any query.
    pub target: String,
    pub body: Vec<u8>,
}

/// Serves `listener` until it fails: each connection on a thread of its own, each request
/// answered by `handler`.
pub fn serve(
    listener: TcpListener,
    limits: Limits,
    handler: Arc<dyn Fn(&Request) -> Reply + Send + Sync>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(stream) => stream,
            // Out of file descriptors, a connection reset before it was accepted: the
            // listener goes on (a pause, so that a full table does not spin).
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if open.fetch_add(1, Ordering::SeqCst) >= limits.connections {
            open.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
            let busy = Reply::error(503, "the server has as many connections as it serves");
            let _ = respond(&mut &stream, &busy, false);
            continue;
        }
        // Counted out however the connection ends: a panic, or no thread to serve it (the
        // closure, this with it, is dropped then).
        struct Closed(Arc<AtomicUsize>);
        impl Drop for Closed {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let closed = Closed(open.clone());
        let handler = handler.clone();
        let spawned = std::thread::Builder::new()
            .name("rectcast serve connection".into())
            .spawn(move || {
                let _closed = closed;
                connection(stream, limits, &*handler);
            });
        if spawned.is_err() {
            // No thread: the connection (moved into the closure) is dropped, closing it.
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A connection's requests, in turn, until it closes, fails, times out or says it is the last.
fn connection(stream: TcpStream, limits: Limits, handler: &dyn Fn(&Request) -> Reply) {
    let _ = stream.set_nodelay(true);
    let Ok(write) = stream.try_clone() else {
        return;
    };
    let mut write = TimedWrite {
        stream: write,
        timeout: limits.timeout,
        start: Instant::now(),
        sent: 0,
    };
    let mut read = BufReader::new(Timed {
        stream,
        timeout: limits.timeout,
        start: Instant::now(),
        received: 0,
        body: false,
    });
    loop {
        read.get_mut().restart();
        let (request, keep_alive) = match next_request(&mut read, &mut write, limits) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(Refusal::Quiet) => return,
            Err(Refusal::Reply(reply)) => {
                write.restart();
                let _ = respond(&mut write, &reply, false);
                linger(&write.stream);
                return;
            }
        };
        let mut reply = handler(&request);
        if request.method == "HEAD" {
            // The head alone (its length still the body's), or the next answer would be read
            // as this one's body.
            reply.body_omitted = true;
        }
        write.restart();
        if respond(&mut write, &reply, keep_alive).is_err() || !keep_alive {
            return;
        }
    }
}

/// Closes a connection refused mid-request so that the client reads the refusal: what it
/// sent and nobody read would otherwise make the close a reset, which discards the reply on
/// its way. The write side ends now; what still arrives is read and dropped, for a second at
/// most.
fn linger(stream: &TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let start = Instant::now();
    let mut sink = [0u8; 1 << 16];
    let mut stream = stream;
    while let Some(left) = Duration::from_secs(1).checked_sub(start.elapsed()) {
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Why a request is not answered by the handler: a reply of the server's own, then the
/// connection closes, or a connection closed with nothing to say.
enum Refusal {
    Reply(Reply),
    Quiet,
}

impl From<Reply> for Refusal {
    fn from(reply: Reply) -> Self {
        Refusal::Reply(reply)
    }
}

/// A read's error as the refusal it makes: a timeout is a 408, anything else (a reset, an end
/// mid-request) leaves nobody to answer.
fn read_failure(e: std::io::Error) -> Refusal {
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            Refusal::Reply(Reply::error(408, "the request did not arrive in time"))
        }
        _ => Refusal::Quiet,
    }
}

/// The next request of a connection and whether the connection stays open after its answer;
/// `None` when the client closed (or went quiet) between requests.
fn next_request(
    read: &mut BufReader<Timed>,
    write: &mut TimedWrite,
    limits: Limits,
) -> Result<Option<(Request, bool)>, Refusal> {
    let mut head = Vec::new();
    // Every byte before the body counts, empty lines before the request line too.
    let mut head_bytes = 0;
    loop {
        let room = (MAX_HEAD + 1 - head_bytes) as u64;
        let before = head.len();
        let got = read.by_ref().take(room).read_until(b'\n', &mut head);
        match got {
            Ok(0) if head.is_empty() => return Ok(None),
            Ok(0) => return Err(Refusal::Quiet),
            Ok(_) => {}
            // Nothing of a request yet: an idle connection, closed without a word.
            Err(_) if head.is_empty() => return Ok(None),
            Err(e) => return Err(read_failure(e)),
        }
        head_bytes += head.len() - before;
        if head_bytes > MAX_HEAD {
            return Err(
                Reply::error(431, format!("the request's head is over {MAX_HEAD} bytes")).into(),
            );
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            // Empty lines before a request line are ignored (RFC 9112, 2.2).
            if before == 0 {
                head.clear();
                continue;
            }
            break;
        }
        if !line.ends_with(b"\n") {
            // The end of the stream, mid-line.
            return Err(Refusal::Quiet);
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(Reply::error(400, "the request's head is incomplete").into());
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(
                Reply::error(431, format!("the request has over {MAX_HEADERS} headers")).into(),
            );
        }
        Err(e) => return Err(Reply::error(400, format!("not an HTTP request: {e}")).into()),
    }
    let (Some(method), Some(target), Some(version)) = (parsed.method, parsed.path, parsed.version)
    else {
        return Err(Reply::error(400, "not an HTTP request").into());
    };
    let header = |name: &str| -> Vec<String> {
        (parsed.headers.iter())
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
            .collect()
    };
    let connection = header("connection");
    let keep_alive = if version == 1 {
        !connection.iter().any(|c| c.contains("close"))
    } else {
        connection.iter().any(|c| c.contains("keep-alive"))
    };
    let mut lengths = header("content-length").into_iter().map(|v| {
        // Digits only: `+5` or ` 5` read as 5 by one reader and refused by another is how
        // requests are smuggled past a proxy.
        v.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| v.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| Reply::error(400, format!("Content-Length: {v} is not a length")))
    });
    let length = match lengths.next().transpose()? {
        None => None,
        Some(first) => {
            for other in lengths {
                if other? != first {
                    return Err(Reply::error(
                        400,
                        "two Content-Length headers that differ: which one the body has is \
                         ambiguous",
                    )
                    .into());
                }
            }
            Some(first)
        }
    };
    let encodings = header("transfer-encoding");
    let chunked = match &encodings[..] {
        [] => false,
        [one] if one == "chunked" => true,
        _ => {
            return Err(Reply::error(
                501,
                format!(
                    "Transfer-Encoding: {}: only chunked is read",
                    encodings.join(", ")
                ),
            )
            .into());
        }
    };
    if chunked && length.is_some() {
        return Err(Reply::error(
            400,
            "both Content-Length and Transfer-Encoding: which one the body follows is ambiguous",
        )
        .into());
    }
    let too_large = || {
        Reply::error(
            413,
            format!(
                "the body is over the limit of {} MiB (--max-body-mib)",
                limits.max_body >> 20
            ),
        )
    };
    if length.is_some_and(|n| n > limits.max_body) {
        return Err(too_large().into());
    }
    if header("expect").iter().any(|e| e == "100-continue")
        && (chunked || length.is_some_and(|n| n > 0))
    {
        write
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|_| Refusal::Quiet)?;
    }
    let mut body = Vec::new();
    read.get_mut().start_body();
    if chunked {
        read_chunked(read, &mut body, limits.max_body)?;
    } else if let Some(length) = length {
        // Grown as it arrives: a declared length is not yet memory to set aside.
        body.reserve(length.min(1 << 20) as usize);
        read.by_ref()
            .take(length)
            .read_to_end(&mut body)
            .map_err(read_failure)?;
        if (body.len() as u64) < length {
            return Err(Refusal::Quiet);
        }
    }
    let request = Request {
        method: method.to_string(),
        target: target.to_string(),
        body,
    };
    Ok(Some((request, keep_alive)))
}

/// A chunked body into `body`, at most `max` bytes of it.
fn read_chunked(read: &mut BufReader<Timed>, body: &mut Vec<u8>, max: u64) -> Result<(), Refusal> {
    let mut line = Vec::new();
    let next_line = |read: &mut BufReader<Timed>, line: &mut Vec<u8>| {
        line.clear();
        match read.by_ref().take(1024).read_until(b'\n', line) {
            Ok(_) if line.ends_with(b"\n") => Ok(()),
            Ok(_) => Err(Refusal::Reply(Reply::error(
                400,
                "a chunk's line is broken",
            ))),
            Err(e) => Err(read_failure(e)),
        }
    };
    loop {
        next_line(read, &mut line)?;
        let text = String::from_utf8_lossy(&line);
        let size = text.split(';').next().unwrap_or("").trim();
        let size = (size.bytes().all(|b| b.is_ascii_hexdigit()) && size.len() <= 16)
            .then(|| u64::from_str_radix(size, 16).ok())
            .flatten()
            .ok_or_else(|| Reply::error(400, format!("{size:?} is not a chunk's size")))?;
        if size == 0 {
            // Trailers, ignored, to the empty line: at most a head's worth of them.
            let mut trailers = 0;
            loop {
                next_line(read, &mut line)?;
                if line == b"\r\n" || line == b"\n" {
                    return Ok(());
                }
                trailers += line.len();
                if trailers > MAX_HEAD {
                    return Err(Reply::error(
                        431,
                        format!("the body's trailers are over {MAX_HEAD} bytes"),
                    )
                    .into());
                }
            }
        }
        // `body.len() <= max` here, so this cannot overflow as `body.len() + size` could.
        if size > max - body.len() as u64 {
            return Err(Reply::error(
                413,
                format!(
                    "the body is over the limit of {} MiB (--max-body-mib)",
                    max >> 20
                ),
            )
            .into());
        }
        let start = body.len();
        read.by_ref()
            .take(size)
            .read_to_end(body)
            .map_err(read_failure)?;
        if ((body.len() - start) as u64) < size {
            return Err(Refusal::Quiet);
        }
        next_line(read, &mut line)?;
        if line != b"\r\n" && line != b"\n" {
            return Err(Reply::error(400, "a chunk's data is longer than its size").into());
        }
    }
}

/// Writes `reply`, saying whether the connection stays open.
fn respond(write: &mut impl Write, reply: &Reply, keep_alive: bool) -> std::io::Result<()> {
    // One packet for a small answer: the head is not sent alone (with TCP_NODELAY on).
    let mut write = std::io::BufWriter::with_capacity(1 << 16, write);
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    write.write_all(head.as_bytes())?;
    if !reply.body_omitted {
        write.write_all(&reply.body)?;
    }
    write.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// A connection's reading side, each read bounded by the request's deadline: the timeout from
/// the request's start, and once its body is being read a second more for each [`MIN_RATE`]
/// bytes of it received (the head gets no more time for being long).
struct Timed {
    stream: TcpStream,
    timeout: Duration,
    start: Instant,
    received: u64,
    body: bool,
}

impl Timed {
    /// A new request's clock.
    fn restart(&mut self) {
        self.start = Instant::now();
        self.received = 0;
        self.body = false;
    }

    /// The body's bytes from now on earn time.
    fn start_body(&mut self) {
        self.received = 0;
        self.body = true;
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let earned = if self.body {
            Duration::from_secs_f64(self.received as f64 / MIN_RATE as f64)
        } else {
            Duration::ZERO
        };
        let allowed = self.timeout + earned;
        let left = allowed.saturating_sub(self.start.elapsed());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let n = self.stream.read(buf)?;
        self.received += n as u64;
        Ok(n)
    }
}

/// A connection's writing side, bounded as its reading side is: an answer must leave within
/// the timeout and a second more for each [`MIN_RATE`] bytes sent, so a client that reads a
/// little now and then does not hold its thread.
struct TimedWrite {
    stream: TcpStream,
    timeout: Duration,
    start: Instant,
    sent: u64,
}

impl TimedWrite {
    /// A new answer's clock.
    fn restart(&mut self) {
        self.start = Instant::now();
        self.sent = 0;
    }
}

impl Write for TimedWrite {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let allowed = self.timeout + Duration::from_secs_f64(self.sent as f64 / MIN_RATE as f64);
        let left = allowed.saturating_sub(self.start.elapsed());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_write_timeout(Some(left))?;
        let n = self.stream.write(buf)?;
        self.sent += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}
