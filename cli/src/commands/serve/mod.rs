//! `rectcast serve`: the playground, a page where the library's own WGSL runs in the browser's
//! WebGPU, answered and checked by the real engine here.
//!
//! - The page's files (`cli/web/`) are embedded in the binary; nothing else is served.
//! - `api.rs` answers the page: scenes, files dropped on it, every pair of the dragged segment,
//!   and each frame's first hits (the native answer the page checks its GPU against).
//! - tiny_http serves it: blocking, a few dependencies, enough for one local user (README, "The
//!   playground"). A few workers take requests from one listener; one engine answers them.
//! - A bad request gets a 4xx with a message and the server goes on; a body over the limit is
//!   refused before it is read, and a panic in a handler is a 500, never the end of the server.

mod api;

use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use clap::Args;
use serde_json::json;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::options::{BackendArg, Outcome, engine};

/// Threads taking requests: a frame's check and a drag's answer need not wait for each other.
const WORKERS: usize = 4;

#[derive(Args)]
pub struct ServeArgs {
    /// The port to listen on (0: a free one, which the printed address names).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The address to listen on. Only 127.0.0.1 (this machine) unless given: any other serves
    /// whoever can reach this machine, with a warning.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    host: IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
    /// The backend of the engine that answers the page.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// The largest request body, in MiB; a larger one is refused (413) before it is read.
    #[arg(long, default_value_t = 64)]
    max_body_mib: u64,
}

/// What the workers share.
pub struct State {
    pub engine: Mutex<rectcast::Engine>,
    /// `rectcast shaders --json`, made once.
    pub kernels: String,
    pub max_body: u64,
}

pub fn run(args: ServeArgs) -> Outcome {
    let address = SocketAddr::new(args.host, args.port);
    if !args.host.is_loopback() {
        eprintln!(
            "rectcast serve: warning: listening on {}: anyone who can reach this machine can use \
             the playground",
            args.host
        );
    }
    let state = Arc::new(State {
        engine: Mutex::new(engine(args.backend.into())?),
        kernels: super::shaders::kernels()?.to_string(),
        max_body: args.max_body_mib.saturating_mul(1 << 20),
    });
    let listener = std::net::TcpListener::bind(address)
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    no_delay(&listener);
    let server = Server::from_listener(listener, None)
        .map_err(|e| format!("cannot serve on {address}: {e}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or("the server has no IP address")?;
    let url = format!("http://{bound}/");
    // The first line of stdout: what a script that started the server reads.
    println!("rectcast serve: {url}");
    {
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    if args.open
        && let Err(e) = webbrowser::open(&url)
    {
        eprintln!("rectcast serve: could not open a browser ({e}); open {url}");
    }
    let server = Arc::new(server);
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (server, state) = (server.clone(), state.clone());
            std::thread::spawn(move || {
                while let Ok(request) = server.recv() {
                    serve(&state, request);
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    Ok(())
}

/// Answers go out as soon as they are written: with Nagle's algorithm on, a frame's answer
/// (64 KiB for 4,096 bullets) waited for the browser's delayed acknowledgement, 40 ms a frame
/// in Chromium. tiny_http does not set TCP_NODELAY on the connections it accepts, but on Linux
/// they inherit it from the listener.
fn no_delay(listener: &std::net::TcpListener) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let on: libc::c_int = 1;
        // SAFETY: a valid socket, and a c_int option value of its size.
        unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&on as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = listener;
}

/// An answer: status, content type and body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            content_type,
            body: body.into(),
        }
    }

    pub fn json(value: &serde_json::Value) -> Self {
        Self::ok("application/json", value.to_string())
    }

    /// An error the page shows: `{"error": message}`.
    pub fn error(status: u16, message: impl std::fmt::Display) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: json!({ "error": message.to_string() })
                .to_string()
                .into_bytes(),
        }
    }
}

/// The page's files, embedded: path, content type, contents.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("../../../web/index.html"),
    ),
    (
        "/playground.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../web/playground.js"),
    ),
    (
        "/gpu.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../web/gpu.js"),
    ),
    (
        "/style.css",
        "text/css; charset=utf-8",
        include_str!("../../../web/style.css"),
    ),
];

/// Answers one request; a handler that panics answers 500 and the worker goes on.
fn serve(state: &State, mut request: Request) {
    let reply =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| route(state, &mut request)))
            .unwrap_or_else(|_| Reply::error(500, "the server failed on this request"));
    let content_type = Header::from_bytes("Content-Type", reply.content_type).expect("ASCII");
    let response = Response::from_data(reply.body)
        .with_status_code(reply.status)
        .with_header(content_type);
    // A client that went away is no concern of the others.
    let _ = request.respond(response);
}

fn route(state: &State, request: &mut Request) -> Reply {
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let method = request.method().clone();
    if method == Method::Get {
        if let Some((_, content_type, body)) = ASSETS.iter().find(|(p, ..)| *p == path) {
            return Reply::ok(content_type, *body);
        }
        return match path {
            "/kernels.json" => Reply::ok("application/json", state.kernels.as_bytes()),
            "/api/info" => api::info(state),
            "/api/scene" => api::scene(query),
            _ if path.starts_with("/api/") => Reply::error(405, format!("GET {path}: use POST")),
            _ => Reply::error(404, format!("no page {path}")),
        };
    }
    if method != Method::Post {
        return Reply::error(405, format!("{method} is not served: GET or POST"));
    }
    let handler: fn(&State, &str, Vec<u8>) -> Reply = match path {
        "/api/pairs" => api::pairs,
        "/api/first-hit" => api::first_hit,
        "/api/load" => api::load,
        _ => return Reply::error(404, format!("no endpoint POST {path}")),
    };
    match body(state, request) {
        Ok(body) => handler(state, query, body),
        Err(reply) => reply,
    }
}

/// The request's body, up to the limit: a larger one is refused by its declared length before
/// any of it is read, or once the limit is passed while reading.
fn body(state: &State, request: &mut Request) -> Result<Vec<u8>, Reply> {
    let limit = state.max_body;
    let too_large = || {
        Reply::error(
            413,
            format!(
                "the body is over the limit of {} MiB (--max-body-mib)",
                limit >> 20
            ),
        )
    };
    if request.body_length().is_some_and(|n| n as u64 > limit) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(limit + 1)
        .read_to_end(&mut body)
        .map_err(|e| Reply::error(400, format!("the body could not be read: {e}")))?;
    if body.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(body)
}
