//! `rectcast serve`: the playground, a page where the library's own WGSL runs in the browser's
//! WebGPU, answered and checked by the real engine here.
//!
//! - The page's files (`cli/web/`) are embedded in the binary; nothing else is served.
//! - `api.rs` answers the page: scenes, files dropped on it, every pair of the dragged segment,
//!   and each frame's first hits (the native answer the page checks its GPU against).
//! - `http.rs` serves it: a thread a connection, each request's time, head and body bounded,
//!   so a slow or hostile client holds only its own connection (docs/cli.md, "The playground").
//!   `engines.rs` answers: a small pool of engines, so one long request does not hold the
//!   others' answers behind it.
//! - A bad request gets a 4xx with a message and the server goes on; a body over the limit is
//!   refused before it is read, and a panic in a handler is a 500, never the end of the server.

mod api;
mod engines;
mod http;
mod shared;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::options::{BackendArg, Outcome};
use shared::{Reply, State};

/// The most engines answering at once: a frame's check and a drag's answer need not wait for
/// each other.
const ENGINES: usize = 2;

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
    /// How long a request's head may take to arrive, in seconds, and its body before it must
    /// come at 1 MiB a second or more; a slower one is answered 408 and closed.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    request_timeout: f64,
    /// The most connections served at once; one more is answered 503.
    #[arg(long, default_value_t = 64)]
    max_connections: usize,
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
    if !(args.request_timeout > 0.0 && args.request_timeout <= 3600.0) {
        return Err(format!(
            "--request-timeout {}: seconds, more than 0 and at most 3600",
            args.request_timeout
        ));
    }
    if args.max_connections == 0 {
        return Err("--max-connections 0: at least 1".into());
    }
    let engines = engines::Engines::open(args.backend.into(), ENGINES)?;
    let chosen = engines.take().chosen().to_string();
    let state = Arc::new(State {
        engines,
        chosen,
        kernels: super::shaders::kernels()?.to_string(),
        max_body: args.max_body_mib.saturating_mul(1 << 20),
    });
    let limits = http::Limits {
        max_body: state.max_body,
        timeout: Duration::from_secs_f64(args.request_timeout),
        connections: args.max_connections,
    };
    let listener = std::net::TcpListener::bind(address)
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot serve on {address}: {e}"))?;
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
    http::serve(
        listener,
        limits,
        Arc::new(move |request: &http::Request| serve(&state, request)),
    );
    Ok(())
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
        "/draw.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../web/draw.js"),
    ),
    (
        "/style.css",
        "text/css; charset=utf-8",
        include_str!("../../../web/style.css"),
    ),
];

/// Answers one request; a handler that panics answers 500 and the server goes on.
fn serve(state: &State, request: &http::Request) -> Reply {
    let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| route(state, request)))
        .unwrap_or_else(|_| Reply::error(500, "the server failed on this request"));
    if request.body.len().max(reply.body.len()) >= 1 << 20 {
        release_memory();
    }
    reply
}

/// Hands the memory a large request freed back to the system: glibc's allocator keeps it
/// otherwise, and the server's resident size stayed at its largest request's.
fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes any size and only returns free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn route(state: &State, request: &http::Request) -> Reply {
    let url = &request.target;
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let method = request.method.as_str();
    // HEAD is answered as GET is, its body left out (http.rs).
    if method == "GET" || method == "HEAD" {
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
    if method != "POST" {
        return Reply::error(405, format!("{method} is not served: GET or POST"));
    }
    let handler: fn(&State, &str, &[u8]) -> Reply = match path {
        "/api/pairs" => api::pairs,
        "/api/first-hit" => api::first_hit,
        "/api/load" => api::load,
        _ => return Reply::error(404, format!("no endpoint POST {path}")),
    };
    handler(state, query, &request.body)
}
