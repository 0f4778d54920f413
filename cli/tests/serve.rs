//! `rectcast serve`, the playground's server, over real HTTP: its answers are the engine's and
//! the CLI's, and a bad request gets a 4xx with a message while the server goes on answering.
//! (The page itself is tested in Chromium: cli/web/test/playground.mjs.)

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use common::{ok, s};
use rectcast::{Batch, Engine, FirstHit, scene};

/// A server on a free port, stopped when dropped.
struct Server {
    child: Child,
    address: String,
}

impl Server {
    fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server given `more` options too.
    fn start_with(more: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rectcast"))
            .args([
                "serve",
                "--port",
                "0",
                "--backend",
                "cpu",
                "--max-body-mib",
                "1",
            ])
            .args(more)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start rectcast serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("its address");
        let address = line
            .trim()
            .strip_prefix("rectcast serve: http://")
            .and_then(|a| a.strip_suffix('/'))
            .unwrap_or_else(|| panic!("not an address: {line:?}"))
            .to_owned();
        Self { child, address }
    }

    /// One request on its own connection: the status and the body. `head` is extra header
    /// lines; a body is sent with its length unless `head` says how it is sent.
    fn request(&self, method: &str, path: &str, head: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut stream = TcpStream::connect(&self.address).expect("connect");
        let length = if head.contains("Content-Length") || head.contains("Transfer-Encoding") {
            String::new()
        } else {
            format!("Content-Length: {}\r\n", body.len())
        };
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n{length}{head}\r\n",
            self.address
        );
        stream.write_all(request.as_bytes()).expect("send");
        // A server that refuses the body may close before it is all sent.
        let _ = stream.write_all(body);
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).expect("the reply");
        let split = reply
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a reply with a head");
        let status = std::str::from_utf8(&reply[9..12]).unwrap().parse().unwrap();
        let head = String::from_utf8_lossy(&reply[..split]).to_ascii_lowercase();
        let body = &reply[split + 4..];
        if head.contains("transfer-encoding: chunked") {
            return (status, unchunked(body));
        }
        (status, body.to_vec())
    }

    fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.request("GET", path, "", b"")
    }

    fn post(&self, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        self.request("POST", path, "", body)
    }

    /// `name`'s value in kB in the server's /proc status (VmRSS, VmHWM).
    fn memory_kb(&self, name: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server's status");
        let line = status
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {status}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

/// The status of the reply `stream` reads, within `seconds`; `None` when none came by then
/// (or the connection closed without one).
fn status_within(stream: &mut TcpStream, seconds: u64) -> Option<u16> {
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(seconds)))
        .unwrap();
    let mut reply = [0u8; 12];
    stream.read_exact(&mut reply).ok()?;
    std::str::from_utf8(&reply[9..12]).ok()?.parse().ok()
}

/// A chunked body's data: each chunk is its length in hexadecimal, CRLF, the data, CRLF.
fn unchunked(mut body: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    loop {
        let end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk's length");
        let size = std::str::from_utf8(&body[..end]).unwrap();
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return data;
        }
        data.extend(&body[end + 2..end + 2 + size]);
        body = &body[end + 4 + size..];
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error message of a JSON error reply.
fn error(body: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(body)));
    value["error"]
        .as_str()
        .expect("an error message")
        .to_owned()
}

/// `/api/first-hit`'s body.
fn first_hit_body(counts: [u32; 2], floats: &[f32]) -> Vec<u8> {
    let mut body: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
    body.extend(floats.iter().flat_map(|f| f.to_le_bytes()));
    body
}

#[test]
fn a_malformed_or_oversized_request_gets_a_4xx_and_the_server_keeps_answering() {
    let server = Server::start();
    let refused = |(status, body): (u16, Vec<u8>), code: u16, says: &str| {
        let message = error(&body);
        assert_eq!(status, code, "{message}");
        assert!(message.contains(says), "{says:?} not in {message:?}");
    };
    refused(server.post("/api/pairs", b"{not json"), 400, "not JSON");
    refused(
        server.post("/api/pairs", b"[1, 2]"),
        400,
        "not a JSON object",
    );
    let not_f32 = br#"{"segments": [[0, 0, 1, 0.1]], "rects": [[0, 0, 1, 1]]}"#;
    refused(
        server.post("/api/pairs", not_f32),
        400,
        "segments[0][3]: 0.1 is not a float32",
    );
    let ragged = br#"{"segments": [[0, 0, 1]], "rects": [[0, 0, 1, 1]]}"#;
    refused(
        server.post("/api/pairs", ragged),
        400,
        "segments[0]: not an array of 4",
    );
    let open_ring = br#"{"segments": [[0, 0, 1, 1]], "polygons": [[[[0, 0], [1, 0]]]]}"#;
    refused(server.post("/api/pairs", open_ring), 400, "polygon 0");
    let many = format!(
        r#"{{"segments": [{}], "rects": [{}]}}"#,
        vec!["[0, 0, 1, 1]"; 600].join(","),
        vec!["[0, 0, 1, 1]"; 600].join(",")
    );
    refused(
        server.post("/api/pairs", many.as_bytes()),
        400,
        "360000 pairs",
    );
    // A NaN cannot be written in JSON, but it can in the binary frames: the engine names it.
    let nan = first_hit_body([1, 1], &[0.0, f32::NAN, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0]);
    refused(server.post("/api/first-hit", &nan), 400, "segment 0");
    let short = first_hit_body([2, 1], &[0.0; 8]);
    refused(
        server.post("/api/first-hit", &short),
        400,
        "8 + 16 x 3 = 56",
    );
    let huge = first_hit_body([u32::MAX, 1], &[]);
    refused(server.post("/api/first-hit", &huge), 400, "at most");
    refused(server.post("/api/first-hit", b"ab"), 400, "two u32 counts");
    // Over the limit (1 MiB here): by its declared length, before it is read, and read.
    let declared = server.request("POST", "/api/pairs", "Content-Length: 2097152\r\n", b"{}");
    refused(declared, 413, "over the limit of 1 MiB");
    let mut chunked = format!("{:x}\r\n", (1 << 20) + 16).into_bytes();
    chunked.extend(vec![b' '; (1 << 20) + 16]);
    chunked.extend(b"\r\n0\r\n\r\n");
    let sent = server.request(
        "POST",
        "/api/pairs",
        "Transfer-Encoding: chunked\r\n",
        &chunked,
    );
    refused(sent, 413, "over the limit");
    let bad_csv = b"min_x,min_y,max_x,max_y\n0,0,1,1\n0,0,x,1\n";
    refused(
        server.post("/api/load?name=boxes.csv&as=rects", bad_csv),
        400,
        "boxes.csv:3:3",
    );
    refused(
        server.post("/api/load?name=..&as=rects", bad_csv),
        400,
        "not a file name",
    );
    refused(
        server.post("/api/load?name=a.csv&as=moons", bad_csv),
        400,
        "as=moons",
    );
    let mut many_rects = String::from("min_x,min_y,max_x,max_y\n");
    many_rects.push_str(&"0,0,1,1\n".repeat(65_537));
    refused(
        server.post("/api/load?name=many.csv&as=rects", many_rects.as_bytes()),
        400,
        "many.csv: more than 65536 records, what a query takes",
    );
    refused(server.get("/api/scene?kind=moons"), 400, "kind=moons");
    refused(
        server.get("/api/scene?segments=99999999999"),
        400,
        "at most",
    );
    refused(server.get("/../Cargo.toml"), 404, "no page");
    refused(server.get("/web/index.html"), 404, "no page");
    refused(server.get("/api/pairs"), 405, "use POST");
    refused(server.request("DELETE", "/", "", b""), 405, "GET or POST");
    refused(server.post("/api/nothing", b""), 404, "no endpoint");

    // Still serving, the page and the API.
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("rectcast playground"));
    let (status, info) = server.get("/api/info");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&info));
    let one = first_hit_body([1, 1], &[-1.0, 0.5, 2.0, 0.5, 0.0, 0.0, 1.0, 1.0]);
    let (status, hit) = server.post("/api/first-hit", &one);
    assert_eq!((status, &hit[..4]), (200, &0u32.to_le_bytes()[..]));
}

#[test]
fn first_hits_over_http_are_the_engines_bytes() {
    let server = Server::start();
    let (segments, rects) = scene::bullet_hell(7, 5000, 300);
    let floats: Vec<f32> = segments
        .iter()
        .flat_map(|s| [s.x0, s.y0, s.x1, s.y1])
        .chain(
            rects
                .iter()
                .flat_map(|r| [r.min_x, r.min_y, r.max_x, r.max_y]),
        )
        .collect();
    let body = first_hit_body([segments.len() as u32, rects.len() as u32], &floats);
    let (status, answer) = server.post("/api/first-hit", &body);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let expected: Vec<FirstHit> = Engine::cpu()
        .first_hit(&Batch::new(&segments, &rects))
        .expect("first hits");
    assert_eq!(answer.len(), 16 * expected.len());
    let mut hits = 0;
    for (i, (got, want)) in answer.chunks_exact(16).zip(&expected).enumerate() {
        let want_bytes: Vec<u8> = [want.rect, want.result.t_enter.to_bits()]
            .into_iter()
            .chain([want.result.t_exit.to_bits(), want.result.flags])
            .flat_map(u32::to_le_bytes)
            .collect();
        assert_eq!(
            got,
            &want_bytes[..],
            "segment {i} {:?}: served {got:?}, engine {want:?}",
            segments[i]
        );
        hits += usize::from(want.rect != FirstHit::NO_RECT);
    }
    assert!(hits > 100, "a scene with hits ({hits})");
}

#[test]
fn the_pairs_tables_are_the_ones_rectcast_pairs_writes() {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // Through a rect's corner, along a wall, into a circle, across a polygon with a hole.
    let segments = write(
        "segments.csv",
        "x0,y0,x1,y1\n40,160,160,40\n0,100,300,100\n",
    );
    let rects = write(
        "rects.csv",
        "min_x,min_y,max_x,max_y\n100,100,200,200\n150,0,170,120\n",
    );
    let walls = write("walls.csv", "x0,y0,x1,y1\n50,100,90,100\n120,0,120,200\n");
    let circles = write("circles.csv", "cx,cy,r\n260,100,10\n60,140,20\n");
    let polygons = write(
        "polygons.wkt",
        "POLYGON((210 50, 290 50, 290 150, 210 150, 210 50), (230 80, 250 80, 250 120, 230 120, 230 80))\n",
    );
    let body = r#"{
        "segments": [[40, 160, 160, 40], [0, 100, 300, 100]],
        "rects": [[100, 100, 200, 200], [150, 0, 170, 120]],
        "walls": [[50, 100, 90, 100], [120, 0, 120, 200]],
        "circles": [[260, 100, 10], [60, 140, 20]],
        "polygons": [[[[210, 50], [290, 50], [290, 150], [210, 150]], [[230, 80], [250, 80], [250, 120], [230, 120]]]]
    }"#;
    let (status, answer) = server.post("/api/pairs", body.as_bytes());
    let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(status, 200, "{answer}");
    for (kind, path) in [
        ("rects", &rects),
        ("walls", &walls),
        ("circles", &circles),
        ("polygons", &polygons),
    ] {
        let flag = format!("--{kind}");
        let cli = ok(&["pairs", "--segments", s(&segments), &flag, s(path)]);
        let cli = String::from_utf8(cli.stdout).unwrap();
        let served = answer[kind]
            .as_str()
            .unwrap_or_else(|| panic!("no {kind} in {answer}"));
        for (row, (a, b)) in served.lines().zip(cli.lines()).enumerate() {
            assert_eq!(
                a,
                b,
                "{kind}, line {}: served against rectcast pairs",
                row + 1
            );
        }
        assert_eq!(served.lines().count(), cli.lines().count(), "{kind}: rows");
        assert!(
            served.contains(",true,"),
            "{kind}: a scene with hits:\n{served}"
        );
    }
}

#[test]
fn the_exported_kernels_are_rectcast_shaders_json_and_the_browsers_fits_its_limits() {
    let server = Server::start();
    let (status, served) = server.get("/kernels.json");
    assert_eq!(status, 200);
    let printed = ok(&["shaders", "--json"]).stdout;
    assert_eq!(
        String::from_utf8_lossy(&served),
        String::from_utf8_lossy(&printed).trim_end()
    );
    let kernels: serde_json::Value = serde_json::from_slice(&served).unwrap();
    let entry = kernels["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["file"] == "rect_queries.wgsl")
        .and_then(|k| k["entry_points"].as_array())
        .and_then(|e| e.iter().find(|e| e["name"] == "segment_rects"))
        .expect("the page's kernel")
        .clone();
    // WebGPU's default: 8 storage buffers per stage, 256 invocations per workgroup.
    assert!(entry["storage_buffers"].as_u64().unwrap() <= 8, "{entry}");
    let size: u64 = entry["workgroup_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .product();
    assert!(size <= 256, "{entry}");
    let names: Vec<&str> = entry["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "params",
            "segments",
            "rects",
            "segment_filters",
            "rect_filters",
            "first_hits",
            "segment_hits",
            "rect_hits",
            "found"
        ]
    );
}

#[test]
fn clients_that_trickle_their_requests_are_timed_out_and_never_stall_the_others() {
    let server = Server::start_with(&["--request-timeout", "3"]);
    // More slow clients than the 4 workers that once took every request: bodies declared and
    // never sent, and heads never ended.
    let mut slow: Vec<TcpStream> = (0..8)
        .map(|k| {
            let mut stream = TcpStream::connect(&server.address).expect("connect");
            let head = if k % 2 == 0 {
                "POST /api/pairs HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"
            } else {
                "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "
            };
            stream.write_all(head.as_bytes()).expect("send");
            stream
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Served while the slow ones hold their connections (within 2 s, before the timeout).
    let mut page = TcpStream::connect(&server.address).expect("connect");
    page.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert_eq!(
        status_within(&mut page, 2),
        Some(200),
        "GET / waited behind 8 slow clients"
    );
    // Each slow one is answered 408 once its time is up, and closed.
    for (k, stream) in slow.iter_mut().enumerate() {
        assert_eq!(status_within(stream, 15), Some(408), "slow client {k}");
    }
    // A kept-alive connection serves requests in turn, each within the limit.
    let kept = TcpStream::connect(&server.address).expect("connect");
    kept.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut kept = BufReader::new(kept);
    for k in 0..3 {
        kept.get_mut()
            .write_all(b"GET /api/info HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut head = String::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            kept.read_line(&mut line).expect("a reply's head");
            if line == "\r\n" {
                break;
            }
            if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = n.trim().parse().unwrap();
            }
            head += &line;
        }
        assert!(head.starts_with("HTTP/1.1 200"), "request {k}: {head}");
        let mut body = vec![0; length];
        kept.read_exact(&mut body).expect("the body");
        assert!(String::from_utf8_lossy(&body).contains("limits"));
    }
}

#[test]
fn a_head_over_16_kib_is_refused_and_so_are_two_lengths_that_differ() {
    let server = Server::start();
    let refused = |(status, body): (u16, Vec<u8>), code: u16, says: &str| {
        let message = error(&body);
        assert_eq!(status, code, "{message}");
        assert!(message.contains(says), "{says:?} not in {message:?}");
    };
    let long = format!("X-Long: {}\r\n", "a".repeat(1 << 20));
    refused(
        server.request("GET", "/", &long, b""),
        431,
        "over 16384 bytes",
    );
    let many: String = (0..100).map(|k| format!("X-{k}: {k}\r\n")).collect();
    refused(
        server.request("GET", "/", &many, b""),
        431,
        "over 64 headers",
    );
    let body = br#"{"segments": [], "rects": []}"#;
    let two = format!("Content-Length: {}\r\nContent-Length: 5\r\n", body.len());
    refused(
        server.request("POST", "/api/pairs", &two, body),
        400,
        "two Content-Length headers that differ",
    );
    let both = format!(
        "Content-Length: {}\r\nTransfer-Encoding: chunked\r\n",
        body.len()
    );
    refused(
        server.request("POST", "/api/pairs", &both, body),
        400,
        "both Content-Length and Transfer-Encoding",
    );
    // The same length twice is one length.
    let same = format!("Content-Length: {0}\r\nContent-Length: {0}\r\n", body.len());
    let (status, answer) = server.request("POST", "/api/pairs", &same, body);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
}

#[test]
fn a_first_hit_request_over_its_pair_limit_is_refused_and_a_long_one_holds_no_drag() {
    let server = Server::start();
    // 16,384 segments and 16,385 rects: one pair over the limit, a 512 KiB body.
    let over = first_hit_body([16_384, 16_385], &vec![0.0; 4 * (16_384 + 16_385)]);
    let (status, body) = server.post("/api/first-hit", &over);
    assert_eq!(status, 400);
    assert!(
        error(&body).contains("make 268451840 pairs, at most 268435456"),
        "{}",
        error(&body)
    );
    // A long frame (every segment crosses every rect) on one connection, a drag on another:
    // the drag is answered while the frame is still being worked.
    let (segments, rects) = (8_192usize, 16_384usize);
    let mut floats = Vec::new();
    for i in 0..segments {
        let y = 0.25 + 0.5 * i as f32 / segments as f32;
        floats.extend([-1.0, y, 2.0, y]);
    }
    for i in 0..rects {
        let d = i as f32 / rects as f32 / 4.0;
        floats.extend([d, d, 1.0 - d, 1.0 - d]);
    }
    let frame = first_hit_body([segments as u32, rects as u32], &floats);
    let address = server.address.clone();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let frame_done = done.clone();
    let long = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(&address).expect("connect");
        let head = format!(
            "POST /api/first-hit HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            frame.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(&frame).unwrap();
        let status = status_within(&mut stream, 120);
        frame_done.store(true, std::sync::atomic::Ordering::SeqCst);
        status
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    let drag = br#"{"segments": [[0, 0, 2, 2]], "rects": [[1, 1, 3, 3]]}"#;
    let (status, _) = server.post("/api/pairs", drag);
    assert_eq!(status, 200);
    assert!(
        !done.load(std::sync::atomic::Ordering::SeqCst),
        "the drag was answered only after the frame"
    );
    assert_eq!(long.join().unwrap(), Some(200));
}

#[test]
fn the_memory_of_a_large_scene_is_handed_back_once_it_is_answered() {
    let server = Server::start();
    let (status, _) = server.get("/api/info");
    assert_eq!(status, 200);
    let before = server.memory_kb("VmRSS");
    let (status, scene) = server.get("/api/scene?segments=1048576&rects=65536");
    assert_eq!(status, 200);
    assert!(
        scene.len() > 50 << 20,
        "a large scene: {} bytes",
        scene.len()
    );
    let (peak, after) = (server.memory_kb("VmHWM"), server.memory_kb("VmRSS"));
    assert!(
        after - before.min(after) < (peak - before) / 4,
        "resident {before} kB before, {peak} kB at the peak, still {after} kB after"
    );
}

#[test]
fn json_numbers_that_are_float32_values_are_taken_exactly() {
    let server = Server::start();
    // Each is exactly a float32 value, as the page writes them (Math.fround, then JSON); a
    // parser one unit in the last place off refused 5 % of them as "not a float32 value".
    for value in [
        "982.7669677734375",
        "116.93984985351562",
        "1.1754943508222875e-38",
    ] {
        let body = format!(r#"{{"segments": [[0, 0, 1, 1]], "rects": [[0, {value}, 1, 999]]}}"#);
        let (status, answer) = server.post("/api/pairs", body.as_bytes());
        assert_eq!(status, 200, "{value}: {}", String::from_utf8_lossy(&answer));
    }
    // f32::MAX is read as itself, and refused for the domain, not as "not a float32 value".
    let body = br#"{"segments": [[0, 0, 1, 1]], "rects": [[0, 0, 1, 3.4028234663852886e38]]}"#;
    let (status, answer) = server.post("/api/pairs", body);
    assert_eq!(status, 400);
    assert!(
        error(&answer).contains("beyond the limit"),
        "{}",
        error(&answer)
    );
}

#[test]
fn a_gzip_bomb_dropped_on_the_page_is_refused_as_it_is_read() {
    use std::io::Write as _;
    let server = Server::start();
    let member = |bytes: &[u8]| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    };
    // 512 gzip members of 1 MiB of zeros, one after another: 512 MiB of records (32 million
    // zero-length segments at the origin) in a body of about half a MiB.
    let bomb = member(&vec![0u8; 1 << 20]).repeat(512);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    let (status, body) = server.post("/api/load?name=bomb.f32.gz&as=segments", &bomb);
    assert_eq!(status, 400);
    assert!(
        error(&body).contains("bomb.f32.gz: more than 1048576 records"),
        "{}",
        error(&body)
    );
    let peak = server.memory_kb("VmHWM");
    assert!(peak < 150 << 10, "the server grew to {peak} kB reading it");
    // A text file, read whole, is bounded by the body's limit once decompressed (1 MiB here).
    let line = "POLYGON ((0 0, 1 0, 1 1, 0 0))\n".repeat(80_000);
    let (status, body) = server.post(
        "/api/load?name=p.wkt.gz&as=polygons",
        &member(line.as_bytes()),
    );
    assert_eq!(status, 400);
    assert!(
        error(&body).contains("p.wkt.gz: over 1 MiB once decompressed"),
        "{}",
        error(&body)
    );
}

#[test]
fn a_chunk_size_near_the_largest_a_head_of_empty_lines_and_head_requests_are_bounded() {
    let server = Server::start();
    let refused_within = |request: &[u8], code: u16| {
        let mut stream = TcpStream::connect(&server.address).expect("connect");
        let _ = stream.write_all(request);
        assert_eq!(
            status_within(&mut stream, 5),
            Some(code),
            "{:?}",
            String::from_utf8_lossy(&request[..request.len().min(80)])
        );
    };
    // 1 byte, then a chunk of 2^64 - 1: the sum once wrapped past the limit check.
    refused_within(
        b"POST /api/pairs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\nffffffffffffffff\r\n",
        413,
    );
    // Empty lines before the request line count toward the head's 16 KiB.
    refused_within(&b"\r\n".repeat(10_000), 431);
    // A chunk longer than its size.
    refused_within(
        b"POST /api/pairs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}JUNK\r\n0\r\n\r\n",
        400,
    );
    // HEAD: the head alone, so the next answer on the connection is read as itself.
    let mut kept = TcpStream::connect(&server.address).expect("connect");
    kept.write_all(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET /api/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut both = Vec::new();
    kept.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    kept.read_to_end(&mut both).expect("both answers");
    let text = String::from_utf8_lossy(&both);
    let second = text.find("HTTP/1.1 200").and_then(|first| {
        text[first + 1..]
            .find("HTTP/1.1 200")
            .map(|k| first + 1 + k)
    });
    let second = second.unwrap_or_else(|| panic!("two 200s: {text}"));
    assert!(
        !text[..second].contains("<html") && !text[..second].contains("<!"),
        "HEAD sent a body: {text}"
    );
    assert!(text[second..].contains("limits"), "{text}");
}
