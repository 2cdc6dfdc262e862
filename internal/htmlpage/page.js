"use strict";
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var svg = document.getElementById("fab"), pane = document.getElementById("pane");
  var tip = document.getElementById("tip"), draw = document.getElementById("draw");
  var W = +svg.dataset.w, H = +svg.dataset.h;
  var vb = { x: 0, y: 0, w: W, h: H };
  function setVB() { svg.setAttribute("viewBox", vb.x + " " + vb.y + " " + vb.w + " " + vb.h); }
  function fit() { vb = { x: 0, y: 0, w: W, h: H }; setVB(); }
  // A very wide fabric fitted whole is a thin strip: start at its left
  // end at a readable scale instead.
  function initial() {
    var r = pane.getBoundingClientRect();
    var s = Math.min(r.width / W, r.height / H);
    if (s * 76 < 24 && r.width > 0) {
      var h = H, w = H * r.width / r.height;
      vb = { x: 0, y: 0, w: w, h: h }; setVB();
    } else fit();
  }
  // Zoom to a box (SVG units), kept inside the drawing's aspect.
  function zoomTo(x0, y0, x1, y1) {
    var r = pane.getBoundingClientRect(), pad = 60;
    var w = Math.max(x1 - x0 + 2 * pad, Math.min(W, 1000)), h = Math.max(y1 - y0 + 2 * pad, 200);
    var a = r.width / r.height;
    if (w / h < a) w = h * a; else h = w / a;
    if (w >= W && h >= H) { fit(); return; }
    vb = { x: (x0 + x1) / 2 - w / 2, y: (y0 + y1) / 2 - h / 2, w: w, h: h }; setVB();
  }
  function zoomEls(els) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    els.forEach(function (e) {
      var b = e.getBBox();
      x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y); x1 = Math.max(x1, b.x + b.width); y1 = Math.max(y1, b.y + b.height);
    });
    if (x0 < Infinity) zoomTo(x0, y0, x1, y1);
  }
  // Pan by dragging, zoom with the wheel around the pointer.
  var drag = null;
  pane.addEventListener("mousedown", function (e) { drag = { x: e.clientX, y: e.clientY, vx: vb.x, vy: vb.y }; pane.style.cursor = "grabbing"; });
  window.addEventListener("mouseup", function () { drag = null; pane.style.cursor = ""; });
  window.addEventListener("mousemove", function (e) {
    if (!drag) return;
    var r = pane.getBoundingClientRect(), s = Math.max(vb.w / r.width, vb.h / r.height);
    vb.x = drag.vx - (e.clientX - drag.x) * s; vb.y = drag.vy - (e.clientY - drag.y) * s; setVB();
  });
  pane.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = pane.getBoundingClientRect(), s = Math.max(vb.w / r.width, vb.h / r.height);
    var px = vb.x + (e.clientX - r.left - (r.width - vb.w / s) / 2) * s;
    var py = vb.y + (e.clientY - r.top) * s;
    var k = e.deltaY > 0 ? 1.25 : 0.8;
    vb.w *= k; vb.h *= k; vb.x = px - (px - vb.x) * k; vb.y = py - (py - vb.y) * k; setVB();
  }, { passive: false });
  document.getElementById("fit").onclick = fit;
  window.addEventListener("beforeprint", fit);

  // Hover cards.
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
  function card(t) {
    var id = t.id, i = +id.slice(1);
    if (id[0] === "l") {
      var L = D.links[i], h = "<div class=h>" + L.n + (L.n > 1 ? " cables" : " cable") + "</div><table>";
      L.c.forEach(function (c) {
        h += "<tr><td class=h>" + esc(c[0]) + " &harr; " + esc(c[1]) + "</td><td>" + esc(c[2]) + "</td></tr>" +
          "<tr><td colspan=2>" + esc(c[0]) + ": " + esc(c[3]) + "<br>" + esc(c[1]) + ": " + esc(c[4]) + "<br>route load: " + esc(c[5]) + "</td></tr>";
      });
      if (L.m) h += "<tr><td colspan=2>… " + L.m + " more cables</td></tr>";
      return h + "</table>";
    }
    return "<div class=h>" + esc(D.boxes[i]) + "</div>";
  }
  svg.addEventListener("mousemove", function (e) {
    if (drag) return;
    var t = e.target.closest("[id^=l],[id^=b]");
    if (!t || t === svg) { tip.hidden = true; return; }
    tip.innerHTML = card(t); tip.hidden = false;
    var r = draw.getBoundingClientRect();
    var x = e.clientX - r.left + 14, y = e.clientY - r.top + 14;
    if (x + tip.offsetWidth > r.width) x = Math.max(0, e.clientX - r.left - tip.offsetWidth - 14);
    tip.style.left = x + "px"; tip.style.top = y + "px";
  });
  svg.addEventListener("mouseleave", function () { tip.hidden = true; });

  // Highlights: a finding's boxes and links, and the routes concerned.
  var lit = [];
  function clear() {
    lit.forEach(function (e) { e.classList.remove("hl", "hp"); });
    lit = []; svg.classList.remove("dim");
    document.querySelectorAll(".f.on").forEach(function (f) { f.classList.remove("on"); });
  }
  function light(ids, cls) {
    ids.forEach(function (id) { var e = document.getElementById(id); if (e) { e.classList.add(cls); lit.push(e); } });
  }
  function pick(li) {
    var on = li.classList.contains("on");
    clear(); document.getElementById("q").value = ""; document.getElementById("qn").textContent = "";
    if (on) { return; }
    li.classList.add("on");
    var F = D.find[+li.dataset.f];
    light((F.b || []).map(function (i) { return "b" + i; }), "hl");
    light((F.l || []).map(function (i) { return "l" + i; }), "hl");
    light((F.p || []).map(function (i) { return "l" + i; }), "hp");
    if (lit.length) { svg.classList.add("dim"); zoomEls(lit.filter(function (e) { return e.classList.contains("hl"); })); }
  }
  document.getElementById("fl").addEventListener("click", function (e) { var li = e.target.closest(".f"); if (li) pick(li); });
  document.getElementById("fl").addEventListener("keydown", function (e) {
    if (e.key === "Enter" || e.key === " ") { var li = e.target.closest(".f"); if (li) { e.preventDefault(); pick(li); } }
  });
  document.getElementById("clear").onclick = function () { clear(); fit(); };

  // Search: hosts and switches by name (a host's box is its leaf's).
  var q = document.getElementById("q"), qn = document.getElementById("qn"), timer = 0;
  function search() {
      clear();
      var s = q.value.trim().toLowerCase();
      if (!s) { qn.textContent = ""; return; }
      var boxes = {}, n = 0;
      D.names.forEach(function (x) { if (x[0].toLowerCase().indexOf(s) >= 0) { n++; boxes[x[1]] = x[0]; } });
      var ids = Object.keys(boxes).map(function (i) { return "b" + i; });
      light(ids, "hl");
      qn.textContent = n ? n + " match" + (n > 1 ? "es" : "") + (n === 1 ? ": " + boxes[Object.keys(boxes)[0]] : "") : "no match";
      if (lit.length) { svg.classList.add("dim"); zoomEls(lit); }
  }
  q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 150); });

  // State or heat view.
  document.querySelectorAll("input[name=view]").forEach(function (r) {
    r.addEventListener("change", function () {
      draw.classList.remove("heat", "util", "wait");
      if (r.value !== "state") draw.classList.add("heat", r.value);
    });
  });
  // A drawing shorter than the pane shrinks the pane to it.
  function size() {
    var r = pane.getBoundingClientRect();
    if (r.width > 0 && r.width * H / W < r.height) pane.style.height = Math.max(260, r.width * H / W + 4) + "px";
  }
  size();
  initial();
  // A link can point at a finding (#f=3) or a search (#q=gpu012).
  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1)), m;
    if ((m = /^f=(\d+)$/.exec(h))) {
      var li = document.querySelector('.f[data-f="' + (+m[1] - 1) + '"]');
      if (li && !li.classList.contains("on")) pick(li);
    } else if ((m = /^q=(.+)$/.exec(h))) {
      q.value = m[1]; search();
    }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.documentElement.setAttribute("data-ready", "yes");
  // Time from navigation to a working page, for the scale figures.
  requestAnimationFrame(function () { document.documentElement.setAttribute("data-ready-ms", Math.round(performance.now())); });
  window.addEventListener("resize", function () { if (vb.w >= W && vb.h >= H) fit(); });
})();
