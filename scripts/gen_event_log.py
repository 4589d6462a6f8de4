#!/usr/bin/env python3
"""Generates a realistic mcpeye event log (docs/event-log.md), for benchmarking `mcpeye report`.

A month of a busy e-commerce MCP server: 8 tools (and the reserved
`mcpeye_request_capability`, about 0.3 % of calls), 400 conversations spread over three
replicas, 3 server versions rolled out one after the other (each replica restarts, so a new pid
and new files), about 4 % errors, 20 % of calls with an intent, a few `method` lines. Each
replica writes rotated files `events-<ms>-<pid>-<n>.jsonl` (a `log` line, then the `tools`
line, then calls), closed once they hold `--file-mib`. One payload file, `ingest-<ms>.jsonl`
(docs/wire-format.md: one JSON payload per line, batches of up to 20 events), holds the ingest's
copy of a share of the calls (`--payload-share`): the same `callId`s, so a reader counts them
once.

Intents are `templated` (about 720 wordings, drawn with a skewed frequency) or `free` (composed
from word pools, with order numbers, sizes and prices: nearly every one distinct). The output is
a function of the arguments and `--seed` only.

    scripts/gen_event_log.py --calls 1000000 --intents free --out /tmp/log
    scripts/gen_event_log.py --intents-only 32000 --intents free > intents.txt

Python standard library only.
"""

import argparse
import json
import os
import random
import sys

START_MS = 1_761_955_200_000  # 2025-11-01T00:00:00Z
MONTH_MS = 30 * 24 * 3600 * 1000
CONVERSATIONS = 400
REPLICAS = 3
VERSIONS = ["2.3.0", "2.4.0", "2.5.0"]
RESERVED = "mcpeye_request_capability"

# name, description per version (a changed description is a new hash), share of calls,
# error rate, median duration in ms.
TOOLS = [
    ("search_products", ["Search the product catalogue by free text."] * 2
     + ["Search the product catalogue by free text, with filters for size, colour and price."], 0.30, 0.02, 120),
    ("get_product", ["Get one product's details by id."] * 3, 0.20, 0.02, 35),
    ("check_inventory", ["Check stock for a product and size."] * 3, 0.12, 0.03, 60),
    ("add_to_cart", ["Add a product to the cart."] * 3, 0.12, 0.05, 45),
    ("create_order", ["Place an order for the cart."] + ["Place an order for the cart and charge the card on file."] * 2,
     0.08, 0.09, 400),
    ("track_shipment", ["Track an order's shipment."] * 3, 0.08, 0.06, 250),
    ("get_order_history", ["List the customer's past orders."] * 3, 0.06, 0.03, 90),
    ("refund_order", ["Refund an order or part of it."] * 2 + ["Refund an order or some of its items."], 0.04, 0.12, 600),
]
RESERVED_SHARE = 0.003
RESERVED_DESCRIPTION = (
    "Tell the server's maintainers about a capability no tool offers: call it with what the user "
    "needed when no tool fits."
)

ERRORS = {
    "search_products": ["search backend timed out", "query too long"],
    "get_product": ["product not found"],
    "check_inventory": ["unknown size", "inventory service unavailable"],
    "add_to_cart": ["out of stock", "cart is full", "product not found"],
    "create_order": ["card declined", "address could not be verified", "cart is empty", "payment timed out"],
    "track_shipment": ["carrier API error", "order not shipped yet"],
    "get_order_history": ["customer not found"],
    "refund_order": ["refund window closed", "order not delivered yet", "amount exceeds order total"],
    RESERVED: ["capability is required"],
}

# Markov chain between tools within a conversation: the next tool's weights per tool.
NEXT = {
    "search_products": [4, 5, 2, 1, 0, 0, 0, 0],
    "get_product": [3, 1, 4, 4, 0, 0, 0, 0],
    "check_inventory": [2, 1, 0, 5, 1, 0, 0, 0],
    "add_to_cart": [3, 1, 1, 1, 4, 0, 0, 0],
    "create_order": [2, 0, 0, 0, 1, 3, 2, 1],
    "track_shipment": [2, 0, 0, 0, 0, 2, 2, 1],
    "get_order_history": [1, 1, 0, 0, 0, 3, 1, 3],
    "refund_order": [2, 0, 0, 0, 0, 1, 2, 1],
}

CLIENTS = ["claude-desktop/1.4.2", "cursor/2.1.0", "vscode-copilot/1.105.0", "goose/1.9.1", "chatgpt-connectors/1.0"]
MODELS = ["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "gpt-5-mini"]
METHODS = [("tools/list", None), ("resources/read", "docs://returns-policy"), ("prompts/get", "find_a_gift")]

# Word pools for intents.
PRODUCTS = """boots sneakers sandals loafers slippers heels trainers socks jacket raincoat parka blazer
hoodie sweater cardigan shirt blouse t-shirt polo jeans chinos shorts leggings skirt dress jumpsuit scarf
gloves beanie cap backpack tote wallet belt sunglasses watch umbrella pyjamas swimsuit vest coat
mug teapot kettle blender toaster skillet wok saucepan knife cutting-board lamp rug cushion duvet
pillow towel candle vase planter bookshelf desk chair stool mattress headphones earbuds speaker charger
tablet-case phone-case keyboard mouse monitor webcam tent sleeping-bag stove lantern water-bottle
yoga-mat dumbbells bicycle helmet running-shoes hiking-boots ski-jacket snowboard puzzle board-game
lego-set doll stroller car-seat crib""".split()
COLOURS = "red blue navy black white grey green olive beige brown pink purple yellow orange teal cream".split()
MATERIALS = "leather suede wool cotton linen denim cashmere silk waterproof vegan recycled bamboo ceramic steel".split()
ADJECTIVES = """cheap affordable premium lightweight warm breathable durable comfortable wide slim
oversized vintage minimalist kids womens mens unisex organic handmade eco-friendly compact foldable
wireless""".split()
PURPOSES = ["hiking", "running", "commuting", "a wedding", "a birthday gift", "a job interview", "winter",
            "travel", "the beach", "camping", "the office", "a new flat", "back to school", "a marathon",
            "a ski trip", "a baby shower", "rainy days", "gardening", "a dinner party", "working from home",
            "a road trip", "the gym", "yoga", "a festival"]
PEOPLE = ["my sister", "my brother", "my mother", "my father", "a colleague", "my partner", "my son",
          "my daughter", "a friend", "my boss", "a neighbour", "my grandmother"]
CARRIERS = "DHL UPS FedEx Royal-Mail La-Poste DPD Hermes GLS".split()
REASONS = ["arrived damaged", "wrong size", "too small", "too large", "not as described", "late delivery",
           "changed mind", "missing parts", "poor quality", "duplicate order", "colour differs from photo"]
OPENERS = ["", "", "", "The user wants to ", "User asked to ", "Need to ", "Trying to ", "Customer would like to ",
           "So I can ", "Going to ", "First ", "Next, "]

# Verbs and frames per tool, for free text.
FREE = {
    "search_products": [
        "{o}find {adj} {colour} {product} for {purpose}",
        "{o}search for {material} {product} under {price} dollars",
        "{o}look up {colour} {material} {product} in size {size}",
        "{o}browse {adj} {product} as a gift for {person}",
        "{o}find {product} similar to the {colour} {product2} the user liked",
    ],
    "get_product": [
        "{o}get details of product {sku} ({colour} {product})",
        "{o}check the materials and care instructions of the {material} {product}",
        "{o}read the reviews of the {adj} {product} {sku}",
        "{o}see the size chart for the {colour} {product}",
    ],
    "check_inventory": [
        "{o}check if the {colour} {product} is in stock in size {size}",
        "{o}see whether {product} {sku} is available near postcode {postcode}",
        "{o}check stock of {material} {product} before adding it to the cart",
    ],
    "add_to_cart": [
        "{o}add {qty} {colour} {product} in size {size} to the cart",
        "{o}put the {adj} {product} {sku} in the basket for {person}",
        "{o}add the {material} {product} to the cart for {purpose}",
    ],
    "create_order": [
        "{o}place the order for {qty} {product} with express delivery to {city}",
        "{o}check out the cart and pay with the saved card ending {card}",
        "{o}order the {colour} {product} as a gift for {person}, delivered by {day}",
    ],
    "track_shipment": [
        "{o}track order {order} shipped with {carrier}",
        "{o}find out where order {order} is, it was due {day}",
        "{o}check delivery status of the {product} in order {order}",
    ],
    "get_order_history": [
        "{o}list the orders of the last {n} months",
        "{o}find the order with the {colour} {product} bought in {month}",
        "{o}show past orders to reorder the {material} {product}",
    ],
    "refund_order": [
        "{o}refund order {order} because the {product} {reason}",
        "{o}return the {colour} {product} from order {order}: {reason}",
        "{o}get money back for {qty} items of order {order}, {reason}",
    ],
    RESERVED: [
        "{o}export my order history to Excel",
        "{o}email me the invoice of order {order} as PDF",
        "{o}set a price alert on the {colour} {product} below {price} dollars",
        "{o}change the delivery address of order {order} to {city}",
        "{o}split order {order} into two shipments",
        "{o}gift wrap the {product} for {person}",
        "{o}schedule delivery of order {order} for {day}",
        "{o}compare the {product} with the {product2} side by side",
    ],
}
CITIES = """Lyon Berlin Madrid Leeds Bristol Porto Milan Ghent Utrecht Krakow Seattle Austin Denver Toronto
Dublin Glasgow Bordeaux Munich Valencia Turin""".split()
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday tomorrow next-week the-weekend".split()
MONTHS = "January February March April May June July August September October November December".split()


def templated_wordings(rng):
    """About 90 fixed wordings per tool (720 for the 8 tools), and 40 asks."""
    out = {}
    for tool, frames in FREE.items():
        want = 40 if tool == RESERVED else 90
        pools = dict(
            o=["", "The user wants to ", "Customer would like to ", "Need to "], adj=ADJECTIVES[:4], colour=COLOURS[:4], product=PRODUCTS[:6], product2=PRODUCTS[6:8],
            material=MATERIALS[:3], purpose=PURPOSES[:3], person=PEOPLE[:2], price=["50", "100"], size=["M", "10"],
            sku=["SKU-1042", "SKU-2210"], postcode=["75011"], qty=["2"], city=CITIES[:2], card=["4242"], day=DAYS[:2],
            order=["A-10023", "A-10077", "A-10190"], carrier=CARRIERS[:2], n=["3", "6"], month=MONTHS[:3],
            reason=REASONS[:3],
        )
        seen = []
        for _ in range(100 * want):
            if len(seen) == want:
                break
            frame = rng.choice(frames)
            text = fill(rng, frame, pools)
            text = text[0].upper() + text[1:]
            if text not in seen:
                seen.append(text)
        out[tool] = seen
    return out


def fill(rng, frame, pools):
    values = {k: rng.choice(v) for k, v in pools.items() if "{" + k + "}" in frame}
    return frame.format(**values)


FREE_POOLS = dict(
    o=OPENERS, adj=ADJECTIVES, colour=COLOURS, product=PRODUCTS, product2=PRODUCTS, material=MATERIALS,
    purpose=PURPOSES, person=PEOPLE, size=["XS", "S", "M", "L", "XL"] + [str(s) for s in range(4, 14)],
    city=CITIES, day=DAYS, carrier=CARRIERS, month=MONTHS, reason=REASONS,
)


def free_text(rng, tool):
    frame = rng.choice(FREE[tool])
    pools = FREE_POOLS
    values = {}
    for key in ("o", "adj", "colour", "product", "product2", "material", "purpose", "person", "size", "city",
                "day", "carrier", "month", "reason"):
        if "{" + key + "}" in frame:
            values[key] = rng.choice(pools[key])
    r = rng.getrandbits
    values.update(price=str(20 + r(8)), sku=f"SKU-{r(16):05d}", postcode=f"{r(16) % 90000 + 10000}",
                  qty=str(1 + r(2)), card=f"{r(14) % 10000:04d}", order=f"A-{r(20) % 1000000:06d}", n=str(1 + r(3)))
    text = frame.format(**{k: v for k, v in values.items() if "{" + k + "}" in frame})
    return text[0].upper() + text[1:]


def fnv_hash(descriptor):
    h = 0xCBF29CE484222325
    for b in json.dumps(descriptor, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"[:12]


def tool_list(version_index):
    tools = []
    for name, descriptions, *_ in TOOLS:
        d = {"name": name, "description": descriptions[version_index], "inputSchema": {"type": "object"}}
        tools.append({"name": name, "hash": fnv_hash(d), "description": descriptions[version_index]})
    d = {"name": RESERVED, "description": RESERVED_DESCRIPTION, "inputSchema": {"type": "object"}}
    tools.append({"name": RESERVED, "hash": fnv_hash(d), "description": RESERVED_DESCRIPTION})
    return tools


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def arguments(rng, tool):
    r = rng.getrandbits
    if tool == "search_products":
        return {"query": f"{rng.choice(COLOURS)} {rng.choice(PRODUCTS)}", "limit": 20}
    if tool in ("get_product", "check_inventory"):
        return {"productId": f"SKU-{r(16):05d}", "size": rng.choice(FREE_POOLS["size"])}
    if tool == "add_to_cart":
        return {"productId": f"SKU-{r(16):05d}", "quantity": 1 + r(2)}
    if tool == "create_order":
        return {"cartId": f"cart-{r(24):07d}", "shipping": rng.choice(["standard", "express"])}
    if tool == "get_order_history":
        return {"months": 1 + r(3)}
    return {"orderId": f"A-{r(20) % 1000000:06d}"}


RESULT_TEXT = {
    "search_products": "Found {n} products: " + ", ".join(f"SKU-{i:05d}" for i in range(12)),
    "get_product": "Product details: name, price, sizes, colours, materials and {n} reviews.",
    "check_inventory": "In stock: {n} units at the central warehouse, 2 in store.",
    "add_to_cart": "Added. The cart holds {n} items.",
    "create_order": "Order placed; confirmation sent. {n} items, delivery in 2 to 4 days.",
    "track_shipment": "In transit: last scanned at the regional hub, {n} km away.",
    "get_order_history": "{n} orders in the period, most recent first.",
    "refund_order": "Refund of {n} EUR issued to the original payment method.",
    RESERVED: "Noted: the maintainers will see this request.",
}


class Writer:
    """One replica: its process (pid, file counter) and its current file."""

    def __init__(self, out, replica, file_bytes):
        self.out, self.replica, self.file_bytes = out, replica, file_bytes
        self.pid = 1000 + replica
        self.opened = 0
        self.f = None
        self.size = 0
        self.tools_line = None
        self.files = 0

    def restart(self, ts, version_index):
        self.close()
        self.pid += 7919
        self.opened = 0
        self.tools_line = dumps({"v": 1, "kind": "tools", "ts": ts, "serverVersion": VERSIONS[version_index],
                                 "tools": tool_list(version_index)}) + "\n"

    def write(self, ts, line):
        if self.f is None or self.size >= self.file_bytes:
            self.close()
            name = f"events-{ts:013d}-{self.pid}-{self.opened}.jsonl"
            self.opened += 1
            self.files += 1
            self.f = open(os.path.join(self.out, name), "w", encoding="utf-8", buffering=1 << 20)
            head = dumps({"v": 1, "kind": "log", "ts": ts, "writer": "mcpeye-rs/0.1.0", "pid": self.pid}) + "\n"
            self.f.write(head)
            self.f.write(self.tools_line)
            self.size = len(head) + len(self.tools_line)
        self.f.write(line)
        self.size += len(line)

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=1_000_000)
    p.add_argument("--intents", choices=["templated", "free"], default="templated")
    p.add_argument("--seed", type=int, default=44)
    p.add_argument("--out", help="directory to write the files into (created)")
    p.add_argument("--file-mib", type=float, default=16.0, help="rotate a file once it holds this much")
    p.add_argument("--payload-share", type=float, default=0.05, help="share of calls also in the payload file")
    p.add_argument("--intent-share", type=float, default=0.20)
    p.add_argument("--intents-only", type=int, metavar="N",
                   help="print N intents (one per line, tools mixed as in a log) and nothing else")
    a = p.parse_args()
    rng = random.Random(a.seed)
    templated = templated_wordings(random.Random(a.seed + 1))
    # Skewed frequency of templated wordings: weight 1/(rank+1), drawn from a table.
    draw = {}
    for tool, words in templated.items():
        table = rng.choices(range(len(words)), weights=[1 / (i + 1) for i in range(len(words))], k=4096)
        draw[tool] = [words[i] for i in table]

    names = [t[0] for t in TOOLS]
    shares = [t[2] for t in TOOLS]
    first_tool = rng.choices(names, weights=shares, k=4096)
    next_table = {t: rng.choices(names, weights=NEXT[t], k=1024) for t in names}

    def intent_of(tool):
        if a.intents == "templated":
            return draw[tool][rng.getrandbits(12)]
        return free_text(rng, tool)

    if a.intents_only:
        out = sys.stdout
        for _ in range(a.intents_only):
            tool = RESERVED if rng.random() < 0.05 else first_tool[rng.getrandbits(12)]
            out.write(intent_of(tool) + "\n")
        return

    if not a.out:
        p.error("--out is required")
    os.makedirs(a.out, exist_ok=True)
    # Durations per tool: a log-normal table around the median, whole milliseconds.
    durations = {}
    for name, _, _, _, median in TOOLS + [(RESERVED, None, 0, 0, 2)]:
        durations[name] = [max(0, int(rng.lognormvariate(0, 0.6) * median)) for _ in range(8192)]
    error_rate = {t[0]: t[3] for t in TOOLS}
    error_rate[RESERVED] = 0.01

    conversations = []
    for c in range(CONVERSATIONS):
        conversations.append({
            "session": f"c-{c:03d}", "client": CLIENTS[c % len(CLIENTS)], "model": MODELS[(c * 7) % len(MODELS)],
            "replica": c % REPLICAS, "tool": None, "turn": 0,
        })
    writers = [Writer(a.out, r, int(a.file_mib * 1024 * 1024)) for r in range(REPLICAS)]
    version_of = [0] * REPLICAS
    for r in range(REPLICAS):
        writers[r].restart(START_MS, 0)
    # Version rollouts: at a third and two thirds of the month, each replica an hour after the last.
    rollouts = sorted((START_MS + MONTH_MS * v // 3 + r * 3_600_000, r, v) for v in (1, 2) for r in range(REPLICAS))
    payload_path = os.path.join(a.out, f"ingest-{START_MS:013d}.jsonl")
    payload_file = open(payload_path, "w", encoding="utf-8", buffering=1 << 20)
    batches = {}
    step = MONTH_MS // max(a.calls, 1)
    assert step >= 1, "more calls than milliseconds in a month"
    n = a.calls
    rand, bits = rng.random, rng.getrandbits
    payload_events = 0
    for i in range(n):
        ts = START_MS + i * step
        while rollouts and rollouts[0][0] <= ts:
            _, r, v = rollouts.pop(0)
            version_of[r] = v
            writers[r].restart(ts, v)
        conv = conversations[bits(9) % CONVERSATIONS]
        if rand() < RESERVED_SHARE:
            tool = RESERVED
        else:
            prev = conv["tool"]
            tool = first_tool[bits(12)] if prev is None or rand() < 0.1 else next_table[prev][bits(10)]
            conv["tool"] = tool
        if rand() < 0.35:
            conv["turn"] += 1
        version = VERSIONS[version_of[conv["replica"]]]
        call_id = f"{bits(32):08x}-{bits(16):04x}-4{bits(12):03x}-{0x8000 | bits(14):04x}-{bits(48):012x}"
        is_error = rand() < error_rate[tool]
        duration = durations[tool][bits(13)]
        if tool == RESERVED:
            args = {"capability": intent_of(RESERVED), "context": f"while using {rng.choice(names)}"}
        else:
            args = arguments(rng, tool)
        event = {"callId": call_id, "toolName": tool, "arguments": args, "isError": is_error, "timestamp": ts,
                 "durationMs": duration}
        if is_error:
            event["errorMessage"] = rng.choice(ERRORS[tool])
        else:
            event["result"] = {"content": [{"type": "text", "text": RESULT_TEXT[tool].format(n=bits(6))}]}
        if tool != RESERVED and rand() < a.intent_share:
            event["intent"] = intent_of(tool)
            event["intentSource"] = "mcpeye"
        event_json = dumps(event)
        w = writers[conv["replica"]]
        line = (f'{{"v":1,"kind":"call","ts":{ts},"callId":"{call_id}","tool":"{tool}",'
                f'"toolHash":"{TOOL_HASHES[version_of[conv["replica"]]][tool]}","session":"{conv["session"]}",'
                f'"turn":"{conv["session"]}-t{conv["turn"]}","model":"{conv["model"]}","client":"{conv["client"]}",'
                f'"serverVersion":"{version}","event":{event_json}}}\n')
        w.write(ts, line)
        if rand() < 0.01:
            method, target = METHODS[bits(2) % len(METHODS)]
            m = {"v": 1, "kind": "method", "ts": ts, "method": method}
            if target:
                m["target"] = target
            m.update(isError=False, durationMs=1 + bits(4), session=conv["session"], model=conv["model"],
                     client=conv["client"], serverVersion=version)
            w.write(ts, dumps(m) + "\n")
        if rand() < a.payload_share:
            key = (conv["client"], version)
            batch = batches.setdefault(key, [])
            batch.append(event_json)
            if len(batch) == 20:
                payload_file.write(payload_line(key, batch))
                payload_events += len(batch)
                batch.clear()
    for key, batch in batches.items():
        if batch:
            payload_file.write(payload_line(key, batch))
            payload_events += len(batch)
    payload_file.close()
    for w in writers:
        w.close()
    files = sum(w.files for w in writers) + 1
    print(f"{n} calls ({a.intents} intents), {files} files ({payload_events} events also in {payload_path})",
          file=sys.stderr)


def payload_line(key, events):
    client, version = key
    identity = dumps({"client": client, "serverVersion": version})
    return f'{{"projectId":"proj_bench","identity":{identity},"events":[{",".join(events)}]}}\n'


TOOL_HASHES = [{t["name"]: t["hash"] for t in tool_list(v)} for v in range(len(VERSIONS))]

if __name__ == "__main__":
    main()
