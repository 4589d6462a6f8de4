// What mcpeye adds to a `tools/call` served through rmcp, measured through rmcp's own client over
// an in-process duplex pipe on a current-thread runtime: the same tool (arguments as one struct)
// served by a plain rmcp `#[tool]` router, by the same router instrumented with
// `mcpeye::rmcp::Instrument` with its tracker, and as a `#[mcpeye::tool]` by `ManifestServer`. Every server
// gets the same request bytes (the arguments and a `mcpeyeIntent`, which the plain tool ignores).
// Reported per server: the median latency of a call (timed one by one) and the process CPU per
// call (all threads), every event delivered to an ingest in another process.
//
// Then the same calls interleaved (`run_paired`): the three servers side by side in one runtime,
// called in turn, each call paired with a plain one made a moment before or after it. Reported
// as `interleaved.*`: the median of the paired latency differences, and the paired thread-CPU
// difference plus the flushers' CPU per event. Blocks of calls drift by several µs on a noisy
// machine; paired calls do not, so these figures resolve a few hundred ns from one run to the next.
// `RMCP_INTERLEAVED_ONLY=1` runs only these (a quick A/B).
//
// Each interleaved round is followed by one of two servers that mcpeye's figures are read against,
// interleaved with plain the same way (a group of three, so that the caches see as many servers):
// `forward`, the plain router with each route replaced by one that only calls the original (what
// wrapping rmcp's routes costs by itself), and `floor`, the same plus the least a recording route
// does (`mcpeyeIntent` taken out, the call timed, an event encoded before the run handed to
// `common::floor`'s pipeline, which sends it to the same ingest). Neither runs mcpeye's code.
//
// `cargo bench --bench rmcp [-- N_CALLS WARM_UP ROUNDS]`
// (`cargo bench --bench rmcp_mimalloc` runs the same with mimalloc as the global allocator.)
//
// `RMCP_ONLY=plain|instrument|manifest` runs one server alone (no comparison), so that it can be
// profiled by itself, e.g. instructions per call under callgrind against `plain`:
// `RMCP_ONLY=instrument valgrind --tool=callgrind --separate-threads=yes <bench binary> --bench 2000 200 1`.

mod common;

use common::floor::{encoded_event, Floor};
use common::{
    arguments_with_intent, assert_sent, flusher_cpu_ns, manifest, median, process_cpu_ns, quantile, range, result,
    thread_cpu_ns, threads_cpu_ns, ChildIngest, InvoiceQuery,
};
use mcpeye::rmcp::ManifestServer;
use mcpeye::Tracker;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::{tool::ToolCallContext, wrapper::Parameters};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use serde_json::Value;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bench tool as an rmcp author writes it.
#[derive(Clone)]
struct Plain {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Plain {
    /// Search invoices (a handler that does next to nothing, so that only the wrapping is measured).
    #[tool(description = "Search invoices.")]
    fn search_invoices(&self, Parameters(q): Parameters<InvoiceQuery>) -> String {
        black_box(&q);
        "3 invoices found".to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Plain {}

const SERVERS: [&str; 3] = ["plain", "instrument", "manifest_server"];

/// The servers that mcpeye's figures are read against (see the top of this file), interleaved
/// as a group of their own so that the cache sees as many servers as in [`SERVERS`]'s.
const FLOOR: [&str; 3] = ["plain", "forward", "floor"];

/// The plain router with each route replaced by one that calls the original, recording into
/// `floor` as the least a recording wrapper does when there is one.
fn wrapped(floor: Option<(Floor, Arc<[u8]>)>) -> ToolRouter<Plain> {
    // One reference count per call, as a recording route keeps its recorder.
    let floor = floor.map(Arc::new);
    let mut router = Plain::tool_router();
    for route in router.map.values_mut() {
        let inner = route.call.clone();
        let floor = floor.clone();
        *route = ToolRoute::new_dyn(route.attr.clone(), move |mut ctx: ToolCallContext<'_, Plain>| {
            let Some(floor) = floor.clone() else { return inner(ctx) };
            black_box(ctx.arguments.as_mut().and_then(|m| m.remove("mcpeyeIntent")));
            let started = Instant::now();
            let call = inner(ctx);
            Box::pin(async move {
                let response = call.await;
                let (floor, event) = &*floor;
                floor.record(event, started.elapsed());
                response
            })
        });
    }
    router
}

/// Latency samples and CPU of one run.
struct Run {
    median_ns: u64,
    cpu_ns: f64,
    /// Of `cpu_ns`, the flusher thread's.
    flusher_ns: f64,
}

/// The bench's request: the tool's arguments and a `mcpeyeIntent`.
fn request() -> CallToolRequestParams {
    let Value::Object(arguments) = arguments_with_intent() else { unreachable!() };
    CallToolRequestParams::new("search_invoices").with_arguments(arguments)
}

/// Serves `server` (one of [`SERVERS`] or [`FLOOR`]; recorded by `tracker` unless plain, or by `floor`) on a
/// task of the current runtime, and connects rmcp's client to it.
async fn connect(
    server: &str,
    tracker: Option<&Tracker>,
    floor: Option<&Floor>,
) -> RunningService<RoleClient, ClientConfig> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    match server {
        "plain" => serve(Plain { tool_router: Plain::tool_router() }, server_io),
        "instrument" => serve(
            Plain {
                tool_router: mcpeye::rmcp::Instrument::new()
                    .tracker(tracker.unwrap().clone())
                    .apply(Plain::tool_router()),
            },
            server_io,
        ),
        "manifest_server" => serve(ManifestServer::new(Arc::new(manifest(tracker.cloned()))), server_io),
        "forward" => serve(Plain { tool_router: wrapped(None) }, server_io),
        "floor" => {
            let floor = floor.expect("the floor's pipeline").clone();
            serve(Plain { tool_router: wrapped(Some((floor, encoded_event(arguments_with_intent())))) }, server_io)
        }
        other => unreachable!("not a bench server: {other}"),
    }
    let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("bench-client", "1.0.0"));
    config.serve(client_io).await.expect("the client connects")
}

fn run(server: &str, ingest: &ChildIngest, n: usize, warm_up: usize) -> Run {
    let tracker = (server != "plain").then(|| ingest.tracker(n + warm_up));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let request = request();
    let run = rt.block_on(async {
        let client = connect(server, tracker.as_ref(), None).await;
        for _ in 0..warm_up {
            client.call_tool(request.clone()).await.unwrap();
        }
        if let Some(t) = &tracker {
            assert!(t.flush(Duration::from_secs(30)).completed);
        }
        let mut samples = Vec::with_capacity(n);
        let (p0, f0) = (process_cpu_ns(), flusher_cpu_ns());
        for _ in 0..n {
            let r = request.clone();
            let t = Instant::now();
            let out = client.call_tool(r).await.unwrap();
            samples.push(t.elapsed().as_nanos() as u64);
            assert_ne!(out.is_error, Some(true));
        }
        if let Some(t) = &tracker {
            assert!(t.flush(Duration::from_secs(60)).completed);
        }
        let (cpu, flusher) = (process_cpu_ns() - p0, flusher_cpu_ns() - f0);
        let _ = client.cancel().await;
        samples.sort_unstable();
        Run { median_ns: quantile(&samples, 0.5), cpu_ns: cpu as f64 / n as f64, flusher_ns: flusher as f64 / n as f64 }
    });
    if let Some(t) = tracker {
        assert_sent(t, n + warm_up, server);
    }
    run
}

/// What each server of a group adds to a call, from calls interleaved one by one in one
/// runtime, indexed as the group (plain's own entries stay 0): the median over calls of (its
/// latency − plain's), the mean of (its thread CPU − plain's), and the CPU per event of the
/// group's flusher threads (mcpeye's, or the floor's). Interleaving pairs each call with a plain
/// one made a moment before or after it, so that the machine's drift over seconds (which moves
/// whole blocks of calls by several µs here) cancels out.
struct Paired {
    latency_ns: [f64; 3],
    thread_cpu_ns: [f64; 3],
    flusher_ns: f64,
}

fn run_paired(ingest: &ChildIngest, group: [&str; 3], n: usize, warm_up: usize) -> Paired {
    let ours = group == SERVERS;
    // [instrument, manifest_server], or the floor's pipeline.
    let trackers: Vec<Tracker> = match ours {
        true => vec![ingest.tracker(n + warm_up), ingest.tracker(n + warm_up)],
        false => vec![],
    };
    let floor = (!ours).then(|| Floor::start(ingest.url(), n + warm_up + 1_000));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let request = request();
    let paired = rt.block_on(async {
        let mut clients = vec![];
        for (i, server) in group.iter().enumerate() {
            // Plain has none; mcpeye's servers one each.
            let tracker = i.checked_sub(1).and_then(|t| trackers.get(t));
            clients.push(connect(server, tracker, floor.as_ref()).await);
        }
        for _ in 0..warm_up {
            for client in &clients {
                client.call_tool(request.clone()).await.unwrap();
            }
        }
        for t in &trackers {
            assert!(t.flush(Duration::from_secs(30)).completed);
        }
        // [server][call]
        let mut latency: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(n)).collect();
        let mut thread_cpu: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(n)).collect();
        let f0 = if ours { flusher_cpu_ns() } else { threads_cpu_ns("floor-flusher") };
        for i in 0..n {
            // Each server goes first in turn: none is always the one right after another's call.
            for k in 0..3 {
                let s = (i + k) % 3;
                let r = request.clone();
                let (c, t) = (thread_cpu_ns(), Instant::now());
                let out = clients[s].call_tool(r).await.unwrap();
                latency[s].push(t.elapsed().as_nanos() as f64);
                thread_cpu[s].push((thread_cpu_ns() - c) as f64);
                assert_ne!(out.is_error, Some(true));
            }
        }
        // Until every event is delivered; the floor's thread reads its own CPU as it ends.
        let flusher = match &floor {
            None => {
                for t in &trackers {
                    assert!(t.flush(Duration::from_secs(60)).completed);
                }
                (flusher_cpu_ns() - f0) as f64 / (2 * n) as f64
            }
            Some(floor) => {
                let end = floor.finish();
                assert_eq!(end.sent, (n + warm_up) as u64, "the floor's events sent");
                (end.cpu_ns - f0) as f64 / n as f64
            }
        };
        for client in clients {
            let _ = client.cancel().await;
        }
        let mut paired = Paired { latency_ns: [0.0; 3], thread_cpu_ns: [0.0; 3], flusher_ns: flusher };
        for s in 1..3 {
            let mut d: Vec<f64> = latency[s].iter().zip(&latency[0]).map(|(x, p)| x - p).collect();
            paired.latency_ns[s] = median(&mut d);
            paired.thread_cpu_ns[s] =
                thread_cpu[s].iter().zip(&thread_cpu[0]).map(|(x, p)| x - p).sum::<f64>() / n as f64;
        }
        paired
    });
    for (server, tracker) in SERVERS[1..].iter().zip(trackers) {
        assert_sent(tracker, n + warm_up, server);
    }
    paired
}

fn serve<S: ServerHandler>(server: S, io: tokio::io::DuplexStream) {
    tokio::spawn(async move {
        if let Ok(running) = server.serve(io).await {
            let _ = running.waiting().await;
        }
    });
}

fn main() {
    common::serve_if_receiver();
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let smoke = !common::full_run();
    let n = args.first().copied().unwrap_or(if smoke { 200 } else { 20_000 });
    let warm_up = args.get(1).copied().unwrap_or(if smoke { 20 } else { 2_000 });
    let rounds = args.get(2).copied().unwrap_or(if smoke { 1 } else { 3 });
    // `rmcp` or `rmcp_mimalloc`.
    let prefix = common::bench_name();
    eprintln!("{prefix}: {n} calls after {warm_up} warm-up, per server, {rounds} rounds");
    // The manifest server answers to "manifest" as well as to its full name.
    let only = std::env::var("RMCP_ONLY").ok().map(|s| if s == "manifest" { "manifest_server".to_string() } else { s });
    if let Some(only) = &only {
        assert!(SERVERS.contains(&only.as_str()), "RMCP_ONLY: one of plain, instrument, manifest");
    }
    let mut ingest = ChildIngest::start();
    let interleaved_only = std::env::var_os("RMCP_INTERLEAVED_ONLY").is_some();
    if let Some(only) = only {
        for round in 0..rounds {
            let r = run(&only, &ingest, n, warm_up);
            eprintln!(
                "round {round} {only:<16} median {:>6} ns  cpu {:>7.0} ns/call (flusher {:>5.0})",
                r.median_ns, r.cpu_ns, r.flusher_ns
            );
        }
        return;
    }
    if !interleaved_only {
        blocks(&prefix, &mut ingest, n, warm_up, rounds);
    }
    interleaved(&prefix, &mut ingest, n, warm_up, rounds);
}

/// The servers one after the other, in blocks of `n` calls: latency and process CPU per call.
fn blocks(prefix: &str, ingest: &mut ChildIngest, n: usize, warm_up: usize, rounds: usize) {
    // [server][round]
    let mut lat = vec![vec![]; SERVERS.len()];
    let mut cpu = vec![vec![]; SERVERS.len()];
    let mut flusher = vec![vec![]; SERVERS.len()];
    for round in 0..rounds {
        let before = ingest.events();
        for (i, server) in SERVERS.iter().enumerate() {
            let r = run(server, ingest, n, warm_up);
            eprintln!(
                "round {round} {server:<16} median {:>6} ns  cpu {:>7.0} ns/call (flusher {:>5.0})",
                r.median_ns, r.cpu_ns, r.flusher_ns
            );
            lat[i].push(r.median_ns as f64);
            cpu[i].push(r.cpu_ns);
            flusher[i].push(r.flusher_ns);
        }
        assert_eq!(ingest.events() - before, 2 * (n + warm_up) as u64, "events that reached the receiver");
    }
    for (i, server) in SERVERS.iter().enumerate() {
        let added = |v: &[Vec<f64>]| -> (f64, f64, f64) {
            let mut d: Vec<f64> = v[i].iter().zip(&v[0]).map(|(x, p)| x - p).collect();
            let (lo, hi) = range(&d);
            (median(&mut d), lo, hi)
        };
        result(&format!("{prefix}.{server}.latency_p50_ns"), format!("{:.0}", median(&mut lat[i].clone())));
        result(&format!("{prefix}.{server}.cpu_ns"), format!("{:.0}", median(&mut cpu[i].clone())));
        if i > 0 {
            let (l, llo, lhi) = added(&lat);
            let (c, clo, chi) = added(&cpu);
            result(&format!("{prefix}.{server}.added_latency_ns"), format!("{l:.0}"));
            result(&format!("{prefix}.{server}.added_latency_min_ns"), format!("{llo:.0}"));
            result(&format!("{prefix}.{server}.added_latency_max_ns"), format!("{lhi:.0}"));
            result(&format!("{prefix}.{server}.added_cpu_ns"), format!("{c:.0}"));
            result(&format!("{prefix}.{server}.added_cpu_min_ns"), format!("{clo:.0}"));
            result(&format!("{prefix}.{server}.added_cpu_max_ns"), format!("{chi:.0}"));
            result(&format!("{prefix}.{server}.flusher_cpu_ns"), format!("{:.0}", median(&mut flusher[i].clone())));
        }
    }
}

/// The servers' calls interleaved ([`run_paired`]): mcpeye's group, then the floor's, each
/// round.
fn interleaved(prefix: &str, ingest: &mut ChildIngest, n: usize, warm_up: usize, rounds: usize) {
    // [group][round]
    let mut paired: [Vec<Paired>; 2] = [vec![], vec![]];
    for round in 0..rounds {
        for (g, group) in [SERVERS, FLOOR].into_iter().enumerate() {
            let before = ingest.events();
            let p = run_paired(ingest, group, n, warm_up);
            eprintln!(
                "round {round} interleaved: {} +{:.0} ns latency, +{:.0} ns thread CPU; {} +{:.0} ns latency, \
                 +{:.0} ns thread CPU; flushers {:.0} ns/event",
                group[1],
                p.latency_ns[1],
                p.thread_cpu_ns[1],
                group[2],
                p.latency_ns[2],
                p.thread_cpu_ns[2],
                p.flusher_ns
            );
            // mcpeye's two servers send an event per call each; of the floor's group, one.
            let sent = if group == SERVERS { 2 } else { 1 } * (n + warm_up) as u64;
            assert_eq!(ingest.events() - before, sent, "events that reached the receiver");
            paired[g].push(p);
        }
    }
    for (group, paired) in [SERVERS, FLOOR].into_iter().zip(&paired) {
        let flusher = median(&mut paired.iter().map(|p| p.flusher_ns).collect::<Vec<_>>());
        let key = if group == SERVERS { "flusher_cpu_ns" } else { "floor_flusher_cpu_ns" };
        result(&format!("{prefix}.interleaved.{key}"), format!("{flusher:.0}"));
        for (i, server) in group.iter().enumerate().skip(1) {
            let lat: Vec<f64> = paired.iter().map(|p| p.latency_ns[i]).collect();
            // `forward` sends nothing.
            let flusher = |p: &Paired| if *server == "forward" { 0.0 } else { p.flusher_ns };
            let cpu: Vec<f64> = paired.iter().map(|p| p.thread_cpu_ns[i] + flusher(p)).collect();
            let ((llo, lhi), (clo, chi)) = (range(&lat), range(&cpu));
            let key = |k: &str| format!("{prefix}.interleaved.{server}.{k}");
            result(&key("added_latency_ns"), format!("{:.0}", median(&mut lat.clone())));
            result(&key("added_latency_min_ns"), format!("{llo:.0}"));
            result(&key("added_latency_max_ns"), format!("{lhi:.0}"));
            result(&key("added_cpu_ns"), format!("{:.0}", median(&mut cpu.clone())));
            result(&key("added_cpu_min_ns"), format!("{clo:.0}"));
            result(&key("added_cpu_max_ns"), format!("{chi:.0}"));
        }
    }
}
