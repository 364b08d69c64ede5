// trafka console: fills each page from /api/v1/ and keeps it live with server-sent events.
"use strict";
const body = document.body;
const page = body.dataset.page;
const $ = (sel) => document.querySelector(sel);
const enc = encodeURIComponent;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v; else if (k === "style") el.style.cssText = v; else el.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}
function fill(tbody, rows) { tbody.replaceChildren(...rows); }
function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB"; }
function ms(n) {
  if (n < 0) return "never";
  if (n % 3600000 === 0) return n / 3600000 + " h";
  if (n % 60000 === 0) return n / 60000 + " min";
  return n >= 1000 ? n / 1000 + " s" : n + " ms";
}
function when(t) { return t === null || t === undefined ? "–" : new Date(t).toISOString().replace("T", " ").replace("Z", ""); }
function toast(text, bad) {
  const t = $("#toast"); t.textContent = text; t.className = "toast" + (bad ? " bad" : ""); t.hidden = false;
  clearTimeout(toast.timer); toast.timer = setTimeout(() => { t.hidden = true; }, 6000);
}

function live(path, render) {
  const source = new EventSource("/api/v1/stream/" + path);
  const badge = $("#live");
  source.onmessage = (e) => { badge.textContent = "live"; badge.className = "live on"; render(JSON.parse(e.data)); };
  source.addEventListener("gone", (e) => { badge.textContent = "gone: " + JSON.parse(e.data).error; badge.className = "live off"; source.close(); });
  source.onerror = () => { badge.textContent = "reconnecting…"; badge.className = "live off"; };
  return source;
}

// Every action asks first, then goes to the JSON API (which sends the Kafka request).
async function act(question, method, path, payload) {
  if (!window.confirm(question)) { toast("cancelled"); return null; }
  const response = await fetch("/api/v1/" + path, {
    method, headers: {"content-type": "application/json"}, body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const answer = await response.json().catch(() => ({error: response.statusText}));
  if (!response.ok) { toast("failed: " + (answer.error || response.status), true); return null; }
  toast("done: " + JSON.stringify(answer));
  return answer;
}
function pairs(text) {
  const out = {};
  for (const part of (text || "").split(",")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}
function onSubmit(id, handler) {
  const form = $(id);
  form.addEventListener("submit", (e) => { e.preventDefault(); handler(Object.fromEntries(new FormData(form)), form); });
}

// --- overview -------------------------------------------------------------------------------
function overview() {
  live("cluster", (c) => {
    const rows = [];
    for (const t of c.topics) {
      const clustered = c.brokers && c.brokers.length > 0;
      t.partitions.forEach((p, i) => rows.push(h("tr", {"data-topic": t.name,
          class: [t.internal ? "internal" : "", clustered && p.isr.length < p.replicas.length ? "under-replicated" : ""].join(" ").trim() || null},
        i === 0 ? h("td", {rowspan: t.partitions.length}, h("b", {}, t.name)) : null,
        h("td", {title: clustered ? `leader ${p.leader} · replicas ${p.replicas.join(",")} · in sync ${p.isr.join(",")}` : null},
          h("a", {href: `/topics/${enc(t.name)}/partitions/${p.partition}`}, p.partition),
          clustered ? h("span", {class: "leader"}, ` → ${p.leader < 0 ? "offline" : "b" + p.leader} [${p.isr.join(",")}]`) : null),
        h("td", {class: "num log-start"}, p.log_start_offset), h("td", {class: "num"}, p.last_stable_offset),
        h("td", {class: "num high-watermark"}, p.high_watermark), h("td", {class: "num"}, bytes(p.size)),
        h("td", {class: "num"}, p.segments.length),
        i === 0 ? h("td", {rowspan: t.partitions.length}, t.cleanup_policy) : null,
        i === 0 ? h("td", {rowspan: t.partitions.length}, ms(t.retention_ms)) : null,
        i === 0 ? h("td", {rowspan: t.partitions.length}, t.retention_bytes < 0 ? "no limit" : bytes(t.retention_bytes)) : null,
        i === 0 ? h("td", {rowspan: t.partitions.length}, t.internal ? "" : h("button", {class: "delete-topic", "data-topic": t.name}, "delete…")) : null)));
    }
    fill($("#topics tbody"), rows);
    const brokers = c.brokers || [];
    $("#brokers-section").hidden = brokers.length === 0;
    fill($("#brokers tbody"), brokers.map((b) => h("tr", {"data-broker": b.node_id, class: b.alive ? null : "down"},
      h("td", {}, b.node_id), h("td", {}, b.address), h("td", {}, b.rack || "–"),
      h("td", {class: "broker-state"}, b.alive ? "up" : "down"), h("td", {class: "num leaders"}, b.leaders),
      h("td", {class: "num"}, b.replicas), h("td", {class: "num under-replicated"}, b.under_replicated),
      h("td", {class: "nemesis"}, nemesisOn(c.nemesis, b.node_id)))));
    showNemesis(c.nemesis);
    $("#internal-count").textContent = c.topics.filter((t) => t.internal).length;
    fill($("#groups tbody"), c.groups.map((g) => h("tr", {"data-group": g.group_id},
      h("td", {}, h("a", {href: "/groups/" + enc(g.group_id)}, g.group_id)), h("td", {class: "state"}, g.state),
      h("td", {}, g.protocol || "–"), h("td", {class: "num"}, g.members.length), h("td", {class: "num"}, g.offsets.length),
      h("td", {class: "num total-lag"}, g.total_lag))));
  });
  $("#show-internal").addEventListener("change", (e) => $("#topics").classList.toggle("fold-internal", !e.target.checked));
  $("#topics").addEventListener("click", (e) => {
    const topic = e.target.dataset && e.target.dataset.topic;
    if (e.target.classList.contains("delete-topic")) act(`Delete topic ${topic} and all its records?`, "DELETE", "topics/" + enc(topic));
  });
  onSubmit("#create-topic", (f) => act(`Create topic ${f.name} with ${f.partitions} partition(s)?`, "POST", "topics",
    {name: f.name, partitions: Number(f.partitions), configs: pairs(f.configs)}));
}

// --- the nemesis (docs/nemesis.md): its faults as they happen --------------------------------
function nemesisOn(n, node) {
  // The last fault done on this broker while the nemesis runs.
  if (!n || n.state !== "running") return "";
  const mine = n.events.filter((e) => e.result === "done" && (e.target || "").startsWith(`broker ${node}`));
  return mine.length ? mine[mine.length - 1].kind : "";
}
function showNemesis(n) {
  $("#nemesis-section").hidden = !n || n.state === "none";
  if (!n || n.state === "none") return;
  const s = n.settings;
  $("#nemesis-summary").textContent = `${n.state} · seed ${s.seed} · ${s.duration_s} s · ` +
    `${s.faults.length ? s.faults.join(", ") : "every fault kind"} · at most ${s.max_down} down · ` +
    `${n.events.length} of ${n.planned} faults` + (n.healed.length ? ` · healed: ${n.healed.join(", ")}` : "");
  fill($("#nemesis-events tbody"), n.events.slice().reverse().map((e) => h("tr", {class: "nemesis-event"},
    h("td", {}, when(e.wall_time_ms)), h("td", {class: "num"}, `+${(e.at_ms / 1000).toFixed(2)} s`),
    h("td", {class: "kind"}, e.kind), h("td", {}, e.target || "–"), h("td", {class: "result"}, e.result))));
}

// --- partition: the log as the seeds draw it ---------------------------------------------------
function partition() {
  const topic = body.dataset.topic, index = Number(body.dataset.partition);
  const base = `topics/${enc(topic)}/partitions/${index}`;
  let seenEnd = null;  // cells past this are new since the last update: only they animate in
  live(base, (p) => {
    $("#log-start").textContent = p.log_start_offset;
    $("#lso").textContent = p.last_stable_offset;
    $("#high-watermark").textContent = p.high_watermark;
    $("#size").textContent = p.size;
    $("#segment-count").textContent = p.segments.length;
    $("#next-offset").textContent = p.log_end_offset;
    // In a simulated cluster: where the partition lives (one broker: itself, not shown).
    $("#replication").hidden = !p.clustered;
    $("#leader").textContent = p.leader < 0 ? "offline" : "broker " + p.leader;
    $("#leader-epoch").textContent = p.leader_epoch;
    $("#replicas").textContent = p.replicas.join(", ");
    $("#isr").textContent = p.isr.slice().sort((a, b) => a - b).join(", ") || "none";
    $("#offline").textContent = p.offline_replicas.join(", ") || "none";
    // Segments: width grows with the records each holds; what retention or DeleteRecords removed is drawn on the left.
    const segs = [];
    if (p.log_start_offset > 0) segs.push(h("div", {class: "segment gone", style: "flex: 0 0 7em"}, h("span", {}, "deleted"), h("small", {}, `offsets < ${p.log_start_offset}`)));
    p.segments.forEach((s, i) => segs.push(h("div", {
      class: "segment" + (s.active ? " active" : "") + (i === 0 && p.segments.length > 1 ? " oldest" : ""),
      "data-base-offset": s.base_offset, style: `flex: ${Math.max(1, Math.min(8, Math.log2(1 + s.next_offset - s.base_offset)))} 1 0`,
      title: `segment ${s.base_offset}: offsets ${s.base_offset}..${s.next_offset - 1}, ${s.size} bytes`},
      h("span", {}, "base " + s.base_offset), h("small", {}, bytes(s.size) + (s.active ? " · active" : "")))));
    fill($("#segments"), segs);
    // Cells: the newest records; holes are offsets compaction removed, striped cells tombstones.
    const tail = p.tail, present = new Map(tail.records.map((r) => [r.offset, r]));
    const cells = [];
    for (let o = tail.from; o < tail.to; o++) {
      const r = present.get(o);
      cells.push(h("div", {class: "cell" + (r ? (r.tombstone ? " tombstone" : "") : " hole") + (o < p.last_stable_offset ? "" : " unstable") + (seenEnd !== null && o >= seenEnd ? " new" : ""),
        "data-offset": o, title: r ? `offset ${o} key ${r.key}` : `offset ${o}: removed by compaction (or a transaction marker)`}, o));
    }
    if (!cells.length) cells.push(h("div", {class: "empty"}, "no records yet"));
    fill($("#cells"), cells);
    seenEnd = tail.to;
    // Each group's committed offset (its bookmark in __consumer_offsets: the next record it
    // will read) and lag, as a marker under that cell.
    const cellsBox = $("#cells"), lastCell = cellsBox.lastElementChild;
    const markers = p.groups.map((g, i) => {
      const cell = cellsBox.querySelector(`.cell[data-offset="${g.committed_offset}"]`);
      const left = cell ? cell.offsetLeft : g.committed_offset < tail.from ? 0 : (lastCell ? lastCell.offsetLeft + lastCell.offsetWidth + 4 : 0);
      return h("div", {class: "group-marker", "data-group": g.group_id, style: `left: ${left}px; top: ${i * 1.7}em`},
        h("span", {class: "arrow"}, g.committed_offset < tail.from ? "◀" : "▲"), h("a", {href: "/groups/" + enc(g.group_id)}, g.group_id),
        h("span", {}, " committed "), h("b", {class: "committed"}, g.committed_offset),
        h("span", {}, " lag "), h("b", {class: "lag"}, g.lag));
    });
    $("#markers").style.minHeight = `${Math.max(1, markers.length) * 1.7}em`;
    fill($("#markers"), markers.length ? markers : [h("div", {class: "empty"}, "no group has committed offsets here")]);
    const r = p.retention, parts = [h("b", {}, "retention "), `cleanup.policy=${r.cleanup_policy} · retention.ms=${ms(r.retention_ms)} · retention.bytes=${r.retention_bytes < 0 ? "no limit" : bytes(r.retention_bytes)} · segment.bytes=${bytes(r.segment_bytes)} · checked every ${ms(r.check_interval_ms)}`];
    if (r.oldest_goes_by_time_at_ms !== null) {
      const left = r.oldest_goes_by_time_at_ms - r.now_ms;
      parts.push(h("div", {id: "goes-by-time"}, `by time: segment ${r.oldest_segment} goes at ${when(r.oldest_goes_by_time_at_ms)} UTC` + (left > 0 ? ` (in ${ms(Math.ceil(left / 1000) * 1000)})` : " (at the next check)")));
    } else parts.push(h("div", {id: "goes-by-time"}, "by time: " + (r.cleanup_policy.includes("delete") ? (r.retention_ms < 0 ? "never" : "nothing to delete") : "no (compacted, not deleted)")));
    if (r.oldest_goes_by_size_after_bytes !== null) {
      parts.push(h("div", {id: "goes-by-size"}, `by size: segment ${r.oldest_segment} goes ` + (r.oldest_goes_by_size_after_bytes === 0 ? "at the next check" : `after ${bytes(r.oldest_goes_by_size_after_bytes)} more`)));
    } else parts.push(h("div", {id: "goes-by-size"}, "by size: " + (r.retention_bytes < 0 ? "no limit" : "nothing to delete")));
    fill($("#retention"), parts);
  });
  onSubmit("#produce", (f) => act(`Produce a record to ${topic}-${index}?`, "POST", base + "/records",
    {key: f.key === "" ? null : f.key, value: f.value, headers: pairs(f.headers)}));
  onSubmit("#delete-records", (f) => act(`Delete every record of ${topic}-${index} before offset ${f.offset}?`, "POST", base + "/delete-records", {offset: Number(f.offset)}));
}

// --- record browser ---------------------------------------------------------------------------
function records() {
  const topic = body.dataset.topic, index = Number(body.dataset.partition);
  const form = $("#browse");
  let next = null;
  function show(value) {
    if (value === null) return h("i", {}, "null");
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }
  // A key or value the registry's schema decoded names that schema above it.
  function cell(value, schema) {
    const label = schema ? h("div", {class: "schema", title: `schema id ${schema.schema_id} (${schema.type})` +
      (schema.error ? ": " + schema.error : "")}, `${schema.subject} v${schema.version}`) : null;
    return [label, h("pre", {}, show(value))];
  }
  async function load(query, append) {
    const response = await fetch(`/api/v1/topics/${enc(topic)}/partitions/${index}/records?` + new URLSearchParams(query));
    const page = await response.json();
    if (!response.ok) { toast(page.error, true); return; }
    $("#range").textContent = `log start ${page.log_start_offset} · high watermark ${page.high_watermark} · showing from ${page.from_offset} as ${page.format}`;
    const rows = page.records.map((r) => h("tr", {"data-offset": r.offset},
      h("td", {class: "num"}, r.offset), h("td", {}, r.time || "–"), h("td", {class: "key"}, ...cell(r.key, r.key_schema)),
      h("td", {class: "value"}, ...cell(r.value, r.value_schema)),
      h("td", {class: "headers"}, r.headers.map((x) => h("div", {}, h("b", {}, x.key + ": "), show(x.value))))));
    if (append) $("#records tbody").append(...rows); else fill($("#records tbody"), rows);
    next = {...query, offset: page.next_offset}; delete next.timestamp;
    $("#more").hidden = page.next_offset >= page.high_watermark || !page.records.length;
  }
  function query() {
    const f = Object.fromEntries(new FormData(form)), q = {format: f.format, limit: f.limit || 50};
    if (f.position !== "") {
      if (f.from === "offset") q.offset = f.position;
      else if (f.from === "timestamp") q.timestamp = f.position;
      else q.timestamp = Date.parse(f.position.endsWith("Z") ? f.position : f.position + "Z");
    }
    return q;
  }
  form.addEventListener("submit", (e) => { e.preventDefault(); load(query(), false); });
  $("#more").addEventListener("click", () => load(next, true));
  live(`topics/${enc(topic)}/partitions/${index}`, () => {});  // the badge shows the broker is there
  load(query(), false);
}

// --- group --------------------------------------------------------------------------------------
function group() {
  const id = body.dataset.group;
  live("groups/" + enc(id), (g) => {
    $("#state").textContent = g.state; $("#protocol-type").textContent = g.protocol_type || "–";
    $("#protocol").textContent = g.protocol || "–"; $("#generation").textContent = g.generation; $("#total-lag").textContent = g.total_lag;
    fill($("#members tbody"), g.members.map((m) => h("tr", {}, h("td", {}, m.member_id), h("td", {}, m.group_instance_id || "–"),
      h("td", {class: "client-id"}, m.client_id), h("td", {}, m.client_host), h("td", {}, (m.subscription || ["?"]).join(", ")),
      h("td", {}, m.assignment.map((a) => `${a.topic}: ${a.partitions.join(",")}`).join("; ") || "–"))));
    fill($("#offsets tbody"), g.offsets.map((o) => h("tr", {"data-topic": o.topic, "data-partition": o.partition},
      h("td", {}, h("a", {href: `/topics/${enc(o.topic)}/partitions/${o.partition}`}, o.topic)), h("td", {class: "num"}, o.partition),
      h("td", {class: "num committed"}, o.committed_offset ?? "–"), h("td", {class: "num"}, o.log_end_offset ?? "–"),
      h("td", {class: "num lag"}, o.lag ?? "–"), h("td", {}, o.member_id || "–"))));
    $("#share-section").hidden = !g.share_partitions;
    fill($("#share-partitions tbody"), (g.share_partitions || []).map((s) => h("tr", {"data-topic": s.topic, "data-partition": s.partition},
      h("td", {}, h("a", {href: `/topics/${enc(s.topic)}/partitions/${s.partition}`}, s.topic)), h("td", {class: "num"}, s.partition),
      h("td", {class: "num start-offset"}, s.start_offset), h("td", {class: "num available"}, s.records.available),
      h("td", {class: "num acquired"}, s.records.acquired), h("td", {class: "num acknowledged"}, s.records.acknowledged),
      h("td", {class: "num archived"}, s.records.archived), h("td", {class: "num in-flight"}, `${s.in_flight} / ${s.max_in_flight}`),
      h("td", {class: "deliveries"}, Object.entries(s.delivery_counts).map(([count, n]) => `${n} × ${count}`).join(", ") || "–"),
      h("td", {class: "held"}, s.acquired.map((a) => h("div", {class: "held-run"},
        `${a.first_offset === a.last_offset ? a.first_offset : a.first_offset + "–" + a.last_offset} by ${a.member_id}, ` +
        `delivery ${a.delivery_count}, locked until ${when(a.lock_until_ms)} (${Math.ceil(a.lock_remaining_ms / 1000)} s)`))))));
    fill($("#rebalances tbody"), g.rebalances.slice().reverse().map((r) => h("tr", {class: r.rebalance ? "rebalance" : null},
      h("td", {}, when(r.time_ms)), h("td", {class: "transition"}, r.previous_state + " → " + r.state),
      h("td", {class: "num"}, r.generation), h("td", {}, r.protocol || "–"), h("td", {}, r.members.join(", ") || "–"),
      h("td", {class: "reason"}, r.reason || ""))));
  });
  onSubmit("#reset-offsets", (f) => {
    const payload = {to: f.to};
    if (f.to === "offset") payload.offset = Number(f.value);
    if (f.to === "timestamp") payload.timestamp = Number(f.value);
    if (f.topic) payload.topic = f.topic;
    act(`Reset the offsets of group ${id} to ${f.to}${f.value ? " " + f.value : ""}?`, "POST", `groups/${enc(id)}/reset-offsets`, payload);
  });
}

// --- broker ---------------------------------------------------------------------------------------
function broker() {
  live("broker", (b) => {
    $("#summary").textContent = `node ${b.node_id} · listening on ${b.listener} (advertised ${b.advertised}) · data in ${b.data_dir} · up ${Math.round(b.uptime_s)} s`;
    fill($("#connections tbody"), b.connections.map((c) => h("tr", {}, h("td", {}, c.peer), h("td", {class: "client-id"}, c.client_id || "–"),
      h("td", {class: "software"}, c.software_name ? `${c.software_name} ${c.software_version || ""}` : "–"),
      h("td", {class: "num"}, c.requests), h("td", {}, c.last_api || "–"))));
    fill($("#telemetry tbody"), (b.telemetry || []).map((t) => h("tr", {"data-instance": t.instance_id},
      h("td", {class: "instance"}, t.instance_id), h("td", {class: "client-id"}, t.client_id || "–"), h("td", {}, t.software || "–"),
      h("td", {}, t.requested_metrics.length ? `${t.requested_metrics.join(", ")} every ${t.push_interval_ms} ms` : "nothing"),
      h("td", {class: "num pushes"}, t.pushes), h("td", {}, t.last_push_ms ? when(t.last_push_ms) : "–"),
      h("td", {class: "metrics"}, t.metrics.length ? h("details", {}, h("summary", {}, `${t.metrics.length} values`),
        h("table", {}, h("tbody", {}, ...t.metrics.map((m) => h("tr", {"data-metric": m.name}, h("td", {}, m.name),
          h("td", {class: "num value"}, String(m.value)),
          h("td", {}, Object.entries(m.attributes).map(([k, v]) => `${k}=${v}`).join(" "))))))) : "–"))));
    fill($("#requests tbody"), b.requests.map((r) => h("tr", {"data-api": r.api}, h("td", {}, r.api), h("td", {class: "num count"}, r.count),
      h("td", {class: "num"}, r.per_second), h("td", {class: "num"}, r.mean_ms))));
    fill($("#settings tbody"), b.settings.map((s) => h("tr", {"data-setting": s.name, class: s.source === "DEFAULT_CONFIG" ? "default" : "set"},
      h("td", {}, s.name), h("td", {class: "value"}, s.value), h("td", {class: "source"}, s.source), h("td", {}, s.doc))));
  });
}

({overview, partition, records, group, broker})[page]();
