#!/usr/bin/env node
// Long-lived Mermaid checker: one headless Chromium, many diagrams.
//
// Protocol (UTF-8 JSON lines):
//   stdout, once at start:  {"ready": true, "mermaid": "<version>", "browser": "<version>"}
//   stdin, per diagram:     {"id": <any>, "diagram": "<mermaid source>", "labels": bool?}
//   stdout, per diagram:    {"id": <same>, "ok": bool, "error": str|null,
//                            "svg_bytes": int, "diagram_type": str|null}
//   With "labels": true an ok answer also carries what a reader sees:
//     "labels": {"nodes": {"<node id>": "<text>"}, "edges": {"<edge id>": "<text>"}}
//   (node ids as written in the diagram, edge ids like "L_A_B_0"; each text is
//   the label's innerText as laid out in the page, <br> read as "\n").
// Requests are answered strictly in order. The process exits when stdin closes.
//
// A diagram is ok only if mermaid.parse() accepts it AND mermaid.render()
// returns an SVG that is not Mermaid's "Syntax error in text" error picture.
//
// Environment: MERMAID_CHROMIUM overrides the browser (default /usr/bin/chromium).

import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const CHROMIUM = process.env.MERMAID_CHROMIUM || "/usr/bin/chromium";
const MERMAID_JS = require.resolve("mermaid/dist/mermaid.min.js");
const MERMAID_VERSION = JSON.parse(
  readFileSync(require.resolve("mermaid/package.json"), "utf8"),
).version;

/** Write one JSON line to stdout. */
function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

/** Launch Chromium with a throw-away profile and load Mermaid into a blank page. */
async function openPage(profileDir) {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true, // Chromium exits when this pipe closes, even if node is killed
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profileDir}`,
    ],
  });
  const page = await browser.newPage();
  await page.setContent("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>");
  await page.addScriptTag({ path: MERMAID_JS });
  await page.evaluate(() => {
    globalThis.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
    globalThis.__renderCount = 0;
  });
  return { browser, page };
}

/** Runs inside the page: parse + render one diagram, never throws. */
async function checkInPage(text, wantLabels) {
  const mermaid = globalThis.mermaid;
  // What a reader sees: the SVG is put into the page so innerText follows
  // the layout (<br> as "\n"); runs of white space may or may not collapse.
  const labelsOf = (svg, renderId) => {
    const host = document.createElement("div");
    host.innerHTML = svg;
    document.body.append(host);
    const textOf = (el) => (el ? el.innerText : "");
    const nodes = {};
    const prefix = `${renderId}-flowchart-`;
    for (const g of host.querySelectorAll("g.node")) {
      const id = g.id.startsWith(prefix) ? g.id.slice(prefix.length).replace(/-\d+$/, "") : g.id;
      nodes[id] = textOf(g.querySelector(".nodeLabel") || g.querySelector(".label"));
    }
    const edges = {};
    for (const g of host.querySelectorAll("g.edgeLabel > g.label[data-id]")) {
      edges[g.getAttribute("data-id")] = textOf(g.querySelector(".edgeLabel") || g);
    }
    return { nodes, edges };
  };
  const message = (e) => (e && (e.message || e.str)) || String(e);
  let diagramType = null;
  try {
    const parsed = await mermaid.parse(text);
    diagramType = parsed ? parsed.diagramType : null;
  } catch (e) {
    return { ok: false, error: `parse: ${message(e)}`, svg_bytes: 0, diagram_type: null };
  }
  const renderId = `mmdcheck${++globalThis.__renderCount}`;
  try {
    const { svg } = await mermaid.render(renderId, text);
    const bytes = new TextEncoder().encode(svg).length;
    if (svg.includes('aria-roledescription="error"') || svg.includes("Syntax error in text")) {
      return { ok: false, error: "render: Mermaid produced its error SVG", svg_bytes: bytes, diagram_type: diagramType };
    }
    const result = { ok: true, error: null, svg_bytes: bytes, diagram_type: diagramType };
    if (wantLabels) result.labels = labelsOf(svg, renderId);
    return result;
  } catch (e) {
    return { ok: false, error: `render: ${message(e)}`, svg_bytes: 0, diagram_type: diagramType };
  } finally {
    // mermaid.render leaves its scratch element behind on some errors.
    document.body.replaceChildren();
  }
}

/** Parse one request line; returns [id, diagram, wantLabels] or throws with a readable message. */
function parseRequest(line) {
  const req = JSON.parse(line);
  if (typeof req !== "object" || req === null || typeof req.diagram !== "string") {
    throw new Error('request must be an object with a string "diagram"');
  }
  return [req.id ?? null, req.diagram, req.labels === true];
}

async function main() {
  const profileDir = mkdtempSync(join(tmpdir(), "mermaid-check-"));
  let browser;
  try {
    const opened = await openPage(profileDir);
    browser = opened.browser;
    const page = opened.page;
    emit({ ready: true, mermaid: MERMAID_VERSION, browser: await browser.version() });
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.trim()) continue;
      let id = null;
      let diagram;
      let wantLabels;
      try {
        [id, diagram, wantLabels] = parseRequest(line);
      } catch (e) {
        emit({ id, ok: false, error: `bad request: ${e.message}`, svg_bytes: 0, diagram_type: null });
        continue;
      }
      emit({ id, ...(await page.evaluate(checkInPage, diagram, wantLabels)) });
    }
  } finally {
    if (browser) await browser.close();
    rmSync(profileDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`check.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
