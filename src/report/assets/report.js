"use strict";
(function () {
  var doc = document, root = doc.documentElement;
  var bar = doc.getElementById("bar");
  var q = doc.getElementById("q"), qn = doc.getElementById("qn");
  var toolSel = doc.getElementById("tool"), errOnly = doc.getElementById("erronly");
  var themeBtn = doc.getElementById("theme");
  var kinds = Array.prototype.slice.call(doc.querySelectorAll("#bar input[data-k]"));
  var evs = Array.prototype.slice.call(doc.querySelectorAll("main .ev"));
  var bodies = new Map(), loading = null, theme = "auto";
  if (bar) bar.hidden = false;
  doc.querySelectorAll("button.full").forEach(function (b) { b.hidden = false; });

  var chunks = new Map(), dec = new TextDecoder();
  // A chunk of full bodies, inflated once.
  function chunk(i) {
    if (!chunks.has(i)) {
      var el = doc.getElementById("c" + i);
      if (!el || typeof DecompressionStream === "undefined") return Promise.reject(new Error("cannot inflate"));
      var bin = atob(el.textContent.trim()), u = new Uint8Array(bin.length);
      for (var k = 0; k < bin.length; k++) u[k] = bin.charCodeAt(k);
      var s = new Blob([u]).stream().pipeThrough(new DecompressionStream("deflate"));
      chunks.set(i, new Response(s).arrayBuffer().then(function (b) { return new Uint8Array(b); }));
    }
    return chunks.get(i);
  }
  // A full body by its reference "CHUNK:OFFSET:LENGTH".
  function inflate(ref) {
    if (bodies.has(ref)) return Promise.resolve(bodies.get(ref));
    var p = ref.split(":").map(Number);
    return chunk(p[0]).then(function (b) {
      var t = dec.decode(b.subarray(p[1], p[1] + p[2]));
      bodies.set(ref, t);
      return t;
    });
  }
  function loadAll() {
    if (!loading) {
      var refs = Array.prototype.map.call(doc.querySelectorAll("button.full"), function (b) { return b.getAttribute("data-blob"); });
      loading = Promise.all(refs.map(function (r) { return inflate(r).catch(function () { return ""; }); }));
    }
    return loading;
  }
  // Controls as the page shows them (escape.rs): a picture (␛) for C0 and DEL, a lone CR
  // included, [U+XXXX] for C1, bidirectional controls and line separators.
  function pictures(t) {
    return t.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, function (c, i) {
      var n = c.charCodeAt(0);
      if (n === 13 && t.charCodeAt(i + 1) === 10) return c;
      if (n < 32) return String.fromCharCode(0x2400 + n);
      if (n === 127) return "\u2421";
      return "[U+" + ("000" + n.toString(16).toUpperCase()).slice(-4) + "]";
    });
  }
  function showFull(b) {
    var body = b.parentNode;
    b.disabled = true;
    inflate(b.getAttribute("data-blob")).then(function (t) {
      var pre = doc.createElement("pre");
      var first = body.querySelector("pre");
      if (first) pre.className = first.className;
      pre.textContent = pictures(t);
      while (body.firstChild) body.removeChild(body.firstChild);
      body.appendChild(pre);
    }, function () { b.textContent = "this browser cannot inflate the full body"; });
  }
  doc.addEventListener("click", function (e) {
    var t = e.target;
    if (t && t.matches && t.matches("button.full")) showFull(t);
  });

  function state() {
    var p = new URLSearchParams();
    if (q && q.value) p.set("q", q.value);
    var off = kinds.filter(function (k) { return !k.checked; }).map(function (k) { return k.getAttribute("data-k"); });
    if (off.length) p.set("hide", off.join(","));
    if (toolSel && toolSel.value) p.set("tool", toolSel.value);
    if (errOnly && errOnly.checked) p.set("err", "1");
    if (theme !== "auto") p.set("theme", theme);
    var s = p.toString();
    history.replaceState(null, "", s ? "#!" + s : location.pathname + location.search);
  }
  function readState() {
    var h = location.hash;
    if (h.indexOf("#!") !== 0) return false;
    var p = new URLSearchParams(h.slice(2));
    if (q) q.value = p.get("q") || "";
    var off = (p.get("hide") || "").split(",");
    kinds.forEach(function (k) { k.checked = off.indexOf(k.getAttribute("data-k")) < 0; });
    if (toolSel) toolSel.value = p.get("tool") || "";
    if (errOnly) errOnly.checked = p.get("err") === "1";
    setTheme(p.get("theme") || "auto");
    return true;
  }
  function setTheme(t) {
    theme = t === "light" || t === "dark" ? t : "auto";
    if (theme === "auto") root.removeAttribute("data-theme"); else root.setAttribute("data-theme", theme);
    if (themeBtn) themeBtn.textContent = "theme: " + theme;
  }

  function textOf(el) {
    var t = el.textContent;
    el.querySelectorAll("button.full").forEach(function (b) {
      var full = bodies.get(b.getAttribute("data-blob"));
      if (full) t += "\n" + full;
    });
    return t.toLowerCase();
  }
  function apply() {
    var needle = q ? q.value.trim().toLowerCase() : "";
    var off = {};
    kinds.forEach(function (k) { if (!k.checked) off[k.getAttribute("data-k")] = true; });
    var tool = toolSel ? toolSel.value : "", err = errOnly && errOnly.checked;
    var show = new Set(), hits = 0;
    var filtering = needle || tool || err;
    evs.forEach(function (el) {
      var k = el.getAttribute("data-k");
      var ok = !off[k];
      if (ok && tool) ok = k === "tool" && el.getAttribute("data-tool") === tool;
      if (ok && err) ok = el.classList.contains("err") || el.classList.contains("error") || el.classList.contains("bad");
      if (ok && needle) ok = textOf(el).indexOf(needle) >= 0;
      el.classList.toggle("hit", !!(needle && ok));
      if (ok) {
        show.add(el);
        if (filtering) hits++;
        for (var p = el.parentElement; p; p = p.parentElement) {
          if (p.classList.contains("ev")) show.add(p);
          if (filtering && p.tagName === "DETAILS") p.open = true;
        }
        if (needle && el.tagName === "DETAILS") el.open = true;
      }
    });
    evs.forEach(function (el) { el.classList.toggle("hide", !show.has(el)); });
    if (qn) qn.textContent = filtering ? hits + " shown" : "";
  }
  var timer = 0;
  function changed() {
    state();
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (q && q.value.trim()) {
        if (qn) qn.textContent = "searching…";
        loadAll().then(apply);
      } else apply();
    }, 150);
  }
  if (q) q.addEventListener("input", changed);
  kinds.forEach(function (k) { k.addEventListener("change", changed); });
  if (toolSel) toolSel.addEventListener("change", changed);
  if (errOnly) errOnly.addEventListener("change", changed);
  if (themeBtn) themeBtn.addEventListener("click", function () {
    setTheme(theme === "auto" ? "light" : theme === "light" ? "dark" : "auto");
    state();
  });
  function all(open) { doc.querySelectorAll("main details").forEach(function (d) { d.open = open; }); }
  var ex = doc.getElementById("expand"), co = doc.getElementById("collapse");
  if (ex) ex.addEventListener("click", function () { all(true); });
  if (co) co.addEventListener("click", function () { all(false); });

  function reveal() {
    var h = location.hash;
    if (h.length < 2 || h.indexOf("#!") === 0) return;
    var id;
    // A malformed escape (`#%E0%A4%A`) is no id of this page.
    try { id = decodeURIComponent(h.slice(1)); } catch (e) { return; }
    var el = doc.getElementById(id);
    var m = /^seq-(\d+)$/.exec(id);
    if (!el && m) {
      // An event the report does not draw: the nearest drawn one before it.
      var want = +m[1], best = -1;
      doc.querySelectorAll("main [id^='seq-']").forEach(function (e) {
        var n = +e.id.slice(4);
        if (n <= want && n > best) { best = n; el = e; }
      });
    }
    if (!el) return;
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    el.scrollIntoView();
  }
  window.addEventListener("hashchange", function () { if (!readState()) reveal(); else apply(); });
  var was = [];
  window.addEventListener("beforeprint", function () {
    was = Array.prototype.filter.call(doc.querySelectorAll("main details"), function (d) { return !d.open; });
    all(true);
  });
  window.addEventListener("afterprint", function () { was.forEach(function (d) { d.open = false; }); });
  if (readState()) changed(); else reveal();
})();
