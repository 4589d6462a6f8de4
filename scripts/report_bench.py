#!/usr/bin/env python3
"""The yardstick of scripts/report_bench.sh.

    report_bench.py duckdb DIR OUT.json     # DuckDB's figures for DIR's files (needs duckdb)
    report_bench.py compare REPORT.json DUCK.json

`duckdb` reads the event log files (`events-*.jsonl`) and the payload files (`ingest-*.jsonl`)
with `read_ndjson`, keeps one call per `callId` (the log's copy first, as the report does) and
computes calls, errors and p50/p95/p99 of `durationMs` (nearest rank: `quantile_disc`) per tool,
distinct conversations (conversation, else session, else turn) and 2-tool sequences (`lead()`
over a conversation ordered by `ts`). `compare` checks `mcpeye report --json`'s figures against
them: every tool row, the totals, the conversations, and the count of every 2-tool sequence the
report lists (and that none DuckDB counts more often is missing from a full list); the
reserved tool's calls count in the totals, and are the report's asks rather than a row of its
table of tools. Exits 1 on
a difference, printing it.
"""

import json
import os
import sys

SQL = """
CREATE TEMP TABLE calls AS
SELECT tool, ts, is_error, duration, thread FROM (
  SELECT *, row_number() OVER (PARTITION BY call_id ORDER BY src) AS rn FROM (
    SELECT callId AS call_id, coalesce(event.toolName, tool) AS tool, coalesce(event."timestamp", ts) AS ts,
           coalesce(event.isError, false) AS is_error, coalesce(event.durationMs, 0) AS duration,
           coalesce(conversation, session, turn) AS thread, 0 AS src
    FROM read_ndjson('{log}', columns={{kind: 'VARCHAR', ts: 'UBIGINT', callId: 'VARCHAR', tool: 'VARCHAR',
        session: 'VARCHAR', conversation: 'VARCHAR', turn: 'VARCHAR',
        event: 'STRUCT(toolName VARCHAR, isError BOOLEAN, "timestamp" UBIGINT, durationMs UBIGINT)'}},
        maximum_object_size = 104857600)
    WHERE kind = 'call'
    {payloads}
  )
) WHERE rn = 1;
"""

PAYLOADS = """
    UNION ALL
    SELECT e.callId, e.toolName, e."timestamp", coalesce(e.isError, false), coalesce(e.durationMs, 0), NULL, 1
    FROM (SELECT unnest(events) AS e FROM read_ndjson('{payload}', columns={{events:
        'STRUCT(callId VARCHAR, toolName VARCHAR, isError BOOLEAN, "timestamp" UBIGINT, durationMs UBIGINT)[]'}},
        maximum_object_size = 104857600))
"""


def duckdb_figures(directory, out):
    import duckdb

    con = duckdb.connect()
    has_payloads = any(n.startswith("ingest-") and n.endswith(".jsonl") for n in os.listdir(directory))
    payloads = PAYLOADS.format(payload=os.path.join(directory, "ingest-*.jsonl")) if has_payloads else ""
    con.execute(SQL.format(log=os.path.join(directory, "events-*.jsonl"), payloads=payloads))
    tools = con.execute("""
        SELECT tool, count(*), count(*) FILTER (WHERE is_error),
               quantile_disc(duration, 0.5), quantile_disc(duration, 0.95), quantile_disc(duration, 0.99)
        FROM calls GROUP BY tool ORDER BY tool""").fetchall()
    conversations = con.execute("SELECT count(DISTINCT thread) FROM calls").fetchone()[0]
    pairs = con.execute("""
        SELECT tool, next, count(*) FROM (
          SELECT tool, lead(tool) OVER (PARTITION BY thread ORDER BY ts) AS next
          FROM calls WHERE thread IS NOT NULL)
        WHERE next IS NOT NULL GROUP BY tool, next ORDER BY 3 DESC, 1, 2""").fetchall()
    figures = {
        "calls": sum(t[1] for t in tools),
        "errors": sum(t[2] for t in tools),
        "conversations": conversations,
        "tools": {t[0]: {"calls": t[1], "errors": t[2], "p50Ms": t[3], "p95Ms": t[4], "p99Ms": t[5]} for t in tools},
        "sequences": [[a, b, n] for a, b, n in pairs],
    }
    with open(out, "w") as f:
        json.dump(figures, f)


def compare(report_path, duck_path):
    with open(report_path) as f:
        report = json.load(f)
    with open(duck_path) as f:
        duck = json.load(f)
    problems = []

    def check(what, ours, theirs):
        if ours != theirs:
            problems.append(f"{what}: report {ours}, duckdb {theirs}")

    check("calls", report["overview"]["calls"], duck["calls"])
    check("errors", report["overview"]["errors"], duck["errors"])
    check("conversations", report["overview"]["conversations"], duck["conversations"])
    check("paths.conversations", report["paths"]["conversations"], duck["conversations"])
    rows = {r["tool"]: r for r in report["tools"]["tools"]}
    # The report shows the reserved tool's calls as asks, not in the table of tools.
    tools = {t: f for t, f in duck["tools"].items() if t != "mcpeye_request_capability"}
    check("tools", sorted(rows), sorted(tools))
    check("asks", sum(a["count"] for a in report["intentGap"]["asks"]) <= duck["tools"].get(
        "mcpeye_request_capability", {}).get("calls", 0), True)
    for tool, theirs in tools.items():
        ours = rows.get(tool, {})
        for key, value in theirs.items():
            check(f"{tool} {key}", ours.get(key), value)
    pairs = {(a, b): n for a, b, n in duck["sequences"]}
    listed = report["paths"]["sequences"]
    shown = {tuple(s["tools"]): s["count"] for s in listed if len(s["tools"]) == 2}
    for pair, count in shown.items():
        check(f"sequence {' > '.join(pair)}", count, pairs.get(pair, 0))
    if listed:
        least = min(s["count"] for s in listed)
        for pair, n in pairs.items():
            if n > least and pair not in shown:
                problems.append(f"sequence {' > '.join(pair)}: {n} in duckdb, above the report's least shown ({least})")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{'same figures' if not problems else f'{len(problems)} differences'}: {len(tools)} tools, "
          f"{len(shown)} 2-tool sequences checked")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "duckdb":
        duckdb_figures(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
