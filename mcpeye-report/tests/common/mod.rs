//! A deterministic generator of event logs and a payload file, shaped like a busy server's:
//! tools under two server versions and two descriptions, conversations with turns, retries,
//! loops, errors, intents from a few wordings, capability requests with contexts, unknown tools,
//! and a payload file that repeats some of the logged calls.

/// A small linear congruential generator: the same seed gives the same files everywhere.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

const TOOLS: [&str; 6] = ["search", "order", "refund", "track", "cart", "export"];
const INTENTS: [&str; 7] = [
    "Find a gift mug.",
    "find a gift mug",
    "Order the blue mug.",
    "Pay for the teapot.",
    "check where my parcel is",
    "Where is my parcel?",
    "refund the broken mug",
];
const ASKS: [&str; 5] = [
    "export my orders as CSV",
    "Export orders to CSV.",
    "export my order history as a CSV file",
    "send an invoice",
    "export orders as PDF",
];
const MODELS: [&str; 3] = ["gpt-5", "claude-4", "gemini-3"];

/// `files` event log files (one per replica) and one payload file, with `calls` calls in all.
pub fn generate(calls: usize, files: usize, seed: u64) -> (Vec<String>, String) {
    let mut rng = Lcg::new(seed);
    let mut logs: Vec<String> = (0..files)
        .map(|f| {
            let mut s = format!("{{\"v\":1,\"kind\":\"log\",\"ts\":1000,\"writer\":\"gen\",\"pid\":{f}}}\n");
            for (version, order_hash, desc) in [("1.0", "o1", "Order."), ("1.1", "o2", "Order a product by SKU.")] {
                let tools: Vec<String> = TOOLS
                    .iter()
                    .map(|t| {
                        let (hash, d) =
                            if *t == "order" { (order_hash.to_owned(), desc) } else { (format!("{t}1"), "A tool.") };
                        format!("{{\"name\":\"{t}\",\"hash\":\"{hash}\",\"description\":\"{d}\"}}")
                    })
                    .chain(["{\"name\":\"never\",\"hash\":\"n1\"}".to_owned()])
                    .collect();
                s.push_str(&format!(
                    "{{\"v\":1,\"kind\":\"tools\",\"ts\":1000,\"serverVersion\":\"{version}\",\"tools\":[{}]}}\n",
                    tools.join(",")
                ));
            }
            s
        })
        .collect();
    let mut payload_events = Vec::new();
    // Conversations: each has a replica, a model, a last step, a clock.
    let conversations = (calls / 20).max(3);
    let mut clock: Vec<u64> = (0..conversations).map(|c| 1_700_000_000_000 + c as u64 * 7).collect();
    let mut last: Vec<(usize, bool)> = vec![(0, false); conversations];
    for i in 0..calls {
        let c = rng.below(conversations as u64) as usize;
        let replica = c % files;
        clock[c] += 1 + rng.below(5_000);
        let ts = clock[c];
        let version = if ts > 1_700_000_000_000 + 40_000 { "1.1" } else { "1.0" };
        let (prev_tool, prev_error) = last[c];
        // Retries after an error, loops on search, otherwise any tool.
        let tool_i = if prev_error && rng.below(3) > 0 {
            prev_tool
        } else if prev_tool == 0 && rng.below(2) == 0 {
            0
        } else {
            rng.below(TOOLS.len() as u64 + 2) as usize
        };
        let id = format!("call-{seed}-{i}");
        let session = format!("s{c}");
        let turn = format!("t{c}-{}", clock[c] / 20_000);
        let model = MODELS[c % MODELS.len()];
        let (tool, hash, event) = if tool_i == TOOLS.len() {
            let ask = ASKS[rng.below(ASKS.len() as u64) as usize];
            let context =
                if rng.below(2) == 0 { format!(",\"context\":\"ctx {}\"", rng.below(3)) } else { String::new() };
            let ev = format!(
                r#"{{"callId":"{id}","toolName":"mcpeye_request_capability","arguments":{{"capability":"{ask}"{context}}},"isError":false,"timestamp":{ts},"durationMs":0}}"#
            );
            ("mcpeye_request_capability".to_owned(), None, ev)
        } else if tool_i == TOOLS.len() + 1 {
            let ev = format!(
                r#"{{"callId":"{id}","toolName":"export_csv","arguments":{{}},"isError":true,"errorMessage":"unknown tool `export_csv`","timestamp":{ts},"durationMs":0}}"#
            );
            ("export_csv".to_owned(), None, ev)
        } else {
            let t = TOOLS[tool_i];
            let error = rng.below(10) == 0;
            let intent = if rng.below(4) == 0 {
                format!(",\"intent\":\"{}\"", INTENTS[rng.below(INTENTS.len() as u64) as usize])
            } else {
                String::new()
            };
            let outcome = if error {
                format!(",\"errorMessage\":\"failure {}\"", rng.below(4))
            } else {
                format!(",\"result\":{{\"n\":{}}}", rng.below(300))
            };
            let hash =
                if t == "order" { if version == "1.0" { "o1" } else { "o2" }.to_owned() } else { format!("{t}1") };
            let ev = format!(
                r#"{{"callId":"{id}","toolName":"{t}","arguments":{{}},"isError":{error},"timestamp":{ts},"durationMs":{},"userId":"u{}"{outcome}{intent}}}"#,
                rng.below(400) + rng.below(3) * 1000,
                c % 17
            );
            last[c] = (tool_i, error);
            (t.to_owned(), Some(hash), ev)
        };
        if tool_i >= TOOLS.len() {
            last[c] = (tool_i, false);
        }
        let hash = hash.map(|h| format!(",\"toolHash\":\"{h}\"")).unwrap_or_default();
        logs[replica].push_str(&format!(
            "{{\"v\":1,\"kind\":\"call\",\"ts\":{ts},\"callId\":\"{id}\",\"tool\":\"{tool}\"{hash},\"session\":\"{session}\",\"turn\":\"{turn}\",\"model\":\"{model}\",\"client\":\"cli/{}\",\"serverVersion\":\"{version}\",\"event\":{event}}}\n",
            c % 3
        ));
        if i % 7 == 0 {
            payload_events.push(event);
        }
        if i % 50 == 0 {
            logs[replica].push_str(&format!(
                "{{\"v\":1,\"kind\":\"method\",\"ts\":{ts},\"method\":\"resources/read\",\"target\":\"docs://x\",\"isError\":false,\"session\":\"{session}\"}}\n"
            ));
        }
    }
    let payloads: Vec<String> = payload_events
        .chunks(5)
        .map(|events| {
            format!(
                "{{\"projectId\":\"p\",\"identity\":{{\"client\":\"cli/0\",\"serverVersion\":\"1.1\"}},\"events\":[{}]}}\n",
                events.join(",")
            )
        })
        .collect();
    (logs, payloads.concat())
}
