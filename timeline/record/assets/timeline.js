// The timeline of a run, drawn from the run's JSON document (docs/run.schema.json) embedded in
// the page as <script id="run-data" type="application/json">. No network, no library.
//
// How it stays fast on long runs: the layout is one pass over the events into a typed array of
// x positions (per zoom and time axis); the picture is an SVG as wide as the window, redrawn
// from those positions for the part in view only (binary search per lane), and events too
// close to tell apart in one lane are drawn as one counted block. A zoom step is one layout
// and one such drawing, whatever the run's length. The overview strip above is a canvas of
// every lane's density with the window in view, to pan.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  // A lane's height; a mark's top and height in it; the duration bar's row under the marks.
  var LANE_H = 30, MARK_Y = 3, MARK_H = 15, BAR_Y = 21, BAR_H = 6, AXIS_H = 46;
  // Events of one lane closer than AGG_PX are one block (at most BLOCK_PX wide); the part drawn
  // reaches MARGIN px past each side of the window.
  var AGG_PX = 5, BLOCK_PX = 48, MARGIN = 120, LABEL_PX = 6.1, MIN_ZOOM = 1e-6;
  // The lanes of the user's code: their scheduler steps are drawn (the step is all they narrate).
  var USER_ROLES = { user: true, worker: true, workqueue: true, controller: true };

  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;"; });
  }
  function fmtTime(ns) {
    var s = ns / 1e9;
    return "+" + (s < 1 ? s.toFixed(4) : s < 100 ? s.toFixed(3) : s.toFixed(1)) + "s";
  }
  // fmtDur prints a duration the way a reader says it: 881ms, 1.6s, 40µs.
  function fmtDur(ns) {
    var a = Math.abs(ns);
    if (a >= 6e10) return (ns / 6e10).toFixed(a >= 6e11 ? 0 : 1) + "m";
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "s";
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "ms";
    if (a >= 1e3) return Math.round(ns / 1e3) + "µs";
    return Math.round(ns) + "ns";
  }
  var UNIT_NS = { h: 36e11, m: 6e10, s: 1e9, ms: 1e6, "µs": 1e3, "μs": 1e3, us: 1e3, ns: 1 };
  // parseDuration reads a Go duration ("1m30.5s", "881.105036ms"); NaN if it is not one.
  function parseDuration(s) {
    if (typeof s !== "string" || s === "") return NaN;
    if (s === "0") return 0;
    var re = /([0-9.]+)(h|ms|µs|μs|us|ns|m|s)/g, m, ns = 0, seen = 0;
    while ((m = re.exec(s)) !== null) { ns += parseFloat(m[1]) * UNIT_NS[m[2]]; seen += m[0].length; }
    return seen === s.replace(/^-/, "").length ? (s.charAt(0) === "-" ? -ns : ns) : NaN;
  }
  function shortName(key) { var i = key.lastIndexOf("/"); return i >= 0 ? key.slice(i + 1) : key; }
  // lowerBound returns the first position in idx (indices into xs, xs increasing along idx)
  // whose x is at least x.
  function lowerBound(idx, xs, x) {
    var lo = 0, hi = idx.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (xs[idx[mid]] < x) lo = mid + 1; else hi = mid; }
    return lo;
  }

  // labelOf is an event's label: its kind, the code of an error, the object's name, tombstone.
  function labelOf(e) {
    var f = e.fields, s = e.kind;
    if (typeof f.code === "number") s += " " + f.code;
    if (e.object) s += " " + shortName(e.object);
    if (f.tombstone === true || (f.obj && f.obj.tombstone)) s += " tombstone";
    return s;
  }

  function Timeline(root, run) {
    this.root = root; this.run = run; this.zoom = 1; this.mode = "compressed";
    this.followed = ""; this.selDir = -1; this.selStages = null;
    var self = this;
    this.laneIndex = {};
    run.components.forEach(function (c, i) { self.laneIndex[c.id] = i; });
    // The scheduler's step events are left out, as the narration leaves them out, except in
    // the lanes of the user's own code, where the step is the only event of its actor.
    var narrated = {};
    run.events.forEach(function (e) { if (!e.scheduler) narrated[e.step + "|" + e.lane] = true; });
    this.ev = run.events.filter(function (e) {
      if (!e.scheduler) return true;
      var c = run.components[self.laneIndex[e.lane]];
      return !!c && USER_ROLES[c.role] === true && !narrated[e.step + "|" + e.lane];
    });
    var n = this.ev.length, L = run.components.length;
    this.n = n;
    this.laneOf = new Int32Array(n);
    this.idxOfSeq = {};
    var counts = new Int32Array(L);
    for (var i = 0; i < n; i++) {
      var li = this.laneIndex[this.ev[i].lane];
      this.laneOf[i] = li; counts[li]++; this.idxOfSeq[this.ev[i].seq] = i;
    }
    this.laneEv = [];
    for (var l = 0; l < L; l++) this.laneEv.push(new Int32Array(counts[l]));
    var fill = new Int32Array(L);
    for (i = 0; i < n; i++) { li = this.laneOf[i]; this.laneEv[li][fill[li]++] = i; }
    this.xs = new Float64Array(n);
    this.bars = this.durations();
    this.failIdx = -1;
    if (run.failure && run.failure.event !== null && run.failure.event in this.idxOfSeq) this.failIdx = this.idxOfSeq[run.failure.event];
    this.build();
  }

  // durations are what the run knows to have lasted: a backoff or any wait with a delay, a
  // watch from its start to its end, a key's wait in a workqueue (add to a worker's get) and a
  // worker's sync of it (get to done). Each is a bar in its lane, from its start to its end.
  Timeline.prototype.durations = function () {
    var ev = this.ev, run = this.run, bars = [], openWatch = {}, queued = {}, syncing = {};
    for (var i = 0; i < ev.length; i++) {
      var e = ev[i], f = e.fields, c = run.components[this.laneOf[i]];
      var d = parseDuration(f.delay);
      if (d > 0) bars.push({ lane: this.laneOf[i], i0: i, i1: -1, t1: e.time_ns + d, label: e.kind + " " + fmtDur(d) });
      if (c.role === "network") {
        if (e.kind === "WATCH-ok") openWatch[e.lane] = { i: i, label: "watch" + (typeof f.watch === "number" ? " " + f.watch : "") };
        else if ((e.kind === "end" || e.kind === "drop") && openWatch[e.lane]) {
          var w = openWatch[e.lane]; delete openWatch[e.lane];
          bars.push({ lane: this.laneOf[i], i0: w.i, i1: i, t1: e.time_ns, label: w.label + " open " + fmtDur(e.time_ns - ev[w.i].time_ns) });
        }
      }
      if (c.role === "workqueue" && e.kind === "add" && typeof f.key === "string" && !((e.lane + " " + f.key) in queued)) queued[e.lane + " " + f.key] = i;
      if (c.role === "worker" && typeof f.key === "string") {
        var q = e.lane.slice(0, e.lane.lastIndexOf("/")), qk = q + " " + f.key;
        if (e.kind === "get") {
          if (qk in queued) {
            var a = queued[qk]; delete queued[qk];
            bars.push({ lane: this.laneOf[a], i0: a, i1: i, t1: e.time_ns, label: shortName(f.key) + " queued " + fmtDur(e.time_ns - ev[a].time_ns) });
          }
          syncing[e.lane + " " + f.key] = i;
        } else if (e.kind === "done" && (e.lane + " " + f.key) in syncing) {
          var g = syncing[e.lane + " " + f.key]; delete syncing[e.lane + " " + f.key];
          bars.push({ lane: this.laneOf[i], i0: g, i1: i, t1: e.time_ns, label: "sync " + shortName(f.key) + " " + fmtDur(e.time_ns - ev[g].time_ns) });
        }
      }
    }
    // A handler's call lasts from its OnAdd, OnUpdate or OnDelete to the listener's "done"
    // step (a scheduler step, not drawn itself), when the handler's calls take time.
    var calling = {};
    run.events.forEach(function (e) {
      var li = this.laneIndex[e.lane], c = run.components[li];
      if (!c || c.role !== "handler") return;
      if (!e.scheduler && /^On(Add|Update|Delete)$/.test(e.kind)) calling[e.lane] = this.idxOfSeq[e.seq];
      else if (e.scheduler && e.kind === "done" && e.lane in calling) {
        var k = calling[e.lane]; delete calling[e.lane];
        if (e.time_ns > ev[k].time_ns) bars.push({ lane: li, i0: k, i1: -1, t1: e.time_ns, label: ev[k].kind + " " + fmtDur(e.time_ns - ev[k].time_ns) });
      }
    }, this);
    // A watch still open at the run's end lasts to its end.
    var last = ev.length ? ev[ev.length - 1].time_ns : 0;
    Object.keys(openWatch).sort().forEach(function (lane) {
      var w = openWatch[lane];
      bars.push({ lane: this.laneOf[w.i], i0: w.i, i1: -1, t1: last, label: w.label + " open" });
    }, this);
    return bars;
  };

  Timeline.prototype.build = function () {
    var self = this, run = this.run, root = this.root;
    root.innerHTML = "";
    var bar = document.createElement("div"); bar.className = "tl-bar"; root.appendChild(bar);
    var lab = document.createElement("label"); lab.textContent = "Follow an object ";
    var sel = document.createElement("select"); sel.className = "tl-follow"; lab.appendChild(sel); bar.appendChild(lab);
    var none = document.createElement("option"); none.value = ""; none.textContent = "(none: click an event)"; sel.appendChild(none);
    var keys = {};
    this.ev.forEach(function (e) { if (e.object) keys[e.object] = true; });
    Object.keys(keys).sort().forEach(function (k) {
      var o = document.createElement("option"); o.value = k; o.textContent = k; sel.appendChild(o);
    });
    sel.addEventListener("change", function () { self.follow(sel.value); });
    this.sel = sel;
    [["−", "zoom out", function () { self.setZoom(self.zoom / 1.5); }],
     ["+", "zoom in", function () { self.setZoom(self.zoom * 1.5); }],
     ["fit", "fit the run into the window", function () { self.fit(); }]].forEach(function (b) {
      var btn = document.createElement("button"); btn.type = "button"; btn.textContent = b[0]; btn.title = b[1];
      btn.className = "tl-zoom"; btn.addEventListener("click", b[2]); bar.appendChild(btn);
    });
    this.modeBtn = document.createElement("button"); this.modeBtn.type = "button"; this.modeBtn.className = "tl-mode";
    this.modeBtn.title = "switch the time axis between linear (distance is time) and compressed (each event its own column, long gaps shortened and labelled)";
    this.modeBtn.addEventListener("click", function () { self.setMode(self.mode === "linear" ? "compressed" : "linear"); });
    bar.appendChild(this.modeBtn);
    this.status = document.createElement("span"); this.status.className = "tl-status"; bar.appendChild(this.status);

    // The overview: every lane's density over the whole run, and the window in view.
    var ov = document.createElement("div"); ov.className = "tl-ovrow"; root.appendChild(ov);
    var ovl = document.createElement("div"); ovl.className = "tl-ovlabel"; ovl.textContent = "overview (drag to pan)"; ov.appendChild(ovl);
    this.ovBox = document.createElement("div"); this.ovBox.className = "tl-overview"; ov.appendChild(this.ovBox);
    this.ovCanvas = document.createElement("canvas"); this.ovBox.appendChild(this.ovCanvas);
    this.ovWin = document.createElement("div"); this.ovWin.className = "tl-ovwin"; this.ovBox.appendChild(this.ovWin);
    var dragging = false;
    var pan = function (ev) {
      var r = self.ovBox.getBoundingClientRect();
      var f = Math.min(Math.max((ev.clientX - r.left) / Math.max(r.width, 1), 0), 1);
      self.scroll.scrollLeft = f * self.width - self.scroll.clientWidth / 2;
      self.render();
    };
    this.ovBox.addEventListener("mousedown", function (ev) { dragging = true; pan(ev); ev.preventDefault(); });
    window.addEventListener("mousemove", function (ev) { if (dragging) pan(ev); });
    window.addEventListener("mouseup", function () { dragging = false; });

    var body = document.createElement("div"); body.className = "tl-body"; root.appendChild(body);
    var labels = document.createElement("div"); labels.className = "tl-labels"; body.appendChild(labels);
    this.axisLabel = document.createElement("div"); this.axisLabel.className = "axis-label"; labels.appendChild(this.axisLabel);
    this.laneLabels = [];
    run.components.forEach(function (c) {
      var d = document.createElement("div"); d.className = "lane-label role-" + c.role; d.dataset.lane = c.id;
      if (c.stage) d.dataset.stage = c.stage;
      d.textContent = c.label; d.title = c.label + " — client-go: " + c.clientgo; labels.appendChild(d);
      self.laneLabels.push(d);
    });
    this.scroll = document.createElement("div"); this.scroll.className = "tl-scroll"; body.appendChild(this.scroll);
    this.inner = document.createElement("div"); this.inner.className = "tl-inner"; this.scroll.appendChild(this.inner);
    this.svg = document.createElementNS(SVGNS, "svg"); this.svg.setAttribute("class", "tl-svg"); this.inner.appendChild(this.svg);
    this.height = AXIS_H + run.components.length * LANE_H + 4;
    this.inner.style.height = this.height + "px";
    var pending = false;
    this.scroll.addEventListener("scroll", function () {
      if (pending) return;
      pending = true;
      // A scroll the page made itself (reveal, a zoom) has been drawn already: drawing it again
      // would only replace the same elements (and pull them from under a pointer or a focus).
      requestAnimationFrame(function () {
        pending = false;
        if (self.scroll.scrollLeft !== self.drawnLeft || self.scroll.clientWidth !== self.drawnWidth) self.render();
      });
    });
    this.scroll.addEventListener("wheel", function (ev) {
      if (!ev.ctrlKey) return;
      ev.preventDefault(); self.setZoom(self.zoom * (ev.deltaY < 0 ? 1.25 : 0.8));
    }, { passive: false });

    var legend = document.createElement("div"); legend.className = "tl-legend"; root.appendChild(legend);
    // One swatch per role and client-go part: two informers, one on a DeltaFIFO and one on a
    // RealFIFO, get one each.
    var seen = {};
    run.components.forEach(function (c) {
      var k = c.role + "|" + c.clientgo;
      if (seen[k]) return;
      seen[k] = true;
      var s = document.createElement("span"); s.className = "role-" + c.role; s.textContent = c.role + " (" + c.clientgo + ")"; legend.appendChild(s);
    });
    [["fault", "injected fault"], ["error", "error answer / dropped stream"], ["violation", "oracle violation"], ["bar", "a duration (backoff, watch open, key queued, sync)"]].forEach(function (m) {
      var s = document.createElement("span"); s.className = "mark-" + m[0] + "-key"; s.textContent = m[1]; legend.appendChild(s);
    });

    this.followedBox = document.createElement("div"); this.followedBox.className = "tl-followed"; root.appendChild(this.followedBox);
    this.tip = document.createElement("div"); this.tip.className = "tl-tip"; root.appendChild(this.tip);

    var svg = this.svg;
    var evAt = function (t) { var i = t && t.getAttribute && t.getAttribute("data-i"); return i === null || i === undefined || i === "" ? null : self.ev[+i]; };
    svg.addEventListener("mousemove", function (ev) {
      var e = evAt(ev.target);
      if (!e) {
        var bi = ev.target.getAttribute && ev.target.getAttribute("data-b");
        if (!bi) { self.tip.style.display = "none"; return; }
        self.showTip(self.blockTip(+bi), ev.clientX, ev.clientY);
        return;
      }
      self.showTip(self.tipText(e), ev.clientX, ev.clientY);
    });
    svg.addEventListener("mouseleave", function () { self.tip.style.display = "none"; });
    svg.addEventListener("click", function (ev) {
      var e = evAt(ev.target);
      if (e) { self.activate(e); return; }
      var bi = ev.target.getAttribute && ev.target.getAttribute("data-b");
      if (bi) { self.zoomAround(self.ev[self.blocks[+bi][0]].seq); return; }
      var di = ev.target.getAttribute && ev.target.getAttribute("data-directive");
      if (di) self.selectDirective(+di, true);
    });
    // Keyboard: every drawn event takes the focus (Tab), shows its line, Enter or Space follows it.
    svg.addEventListener("focusin", function (ev) {
      var e = evAt(ev.target);
      if (!e) return;
      var r = ev.target.getBoundingClientRect();
      self.showTip(self.tipText(e), r.right, r.bottom);
    });
    svg.addEventListener("focusout", function () { self.tip.style.display = "none"; });
    svg.addEventListener("keydown", function (ev) {
      var e = evAt(ev.target);
      if (e && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); self.activate(e); }
    });
  };

  // blockSeqs are the seqs of the events drawn as block b; blockTip what hovering it says.
  Timeline.prototype.blockSeqs = function (b) {
    var ev = this.ev;
    return (this.blocks[b] || []).map(function (i) { return ev[i].seq; });
  };
  Timeline.prototype.blockTip = function (b) {
    var g = this.blocks[b] || [], ev = this.ev;
    if (!g.length) return "";
    var kinds = {};
    g.forEach(function (i) { kinds[ev[i].kind] = (kinds[ev[i].kind] || 0) + 1; });
    return g.length + " events, " + fmtTime(ev[g[0]].time_ns) + " to " + fmtTime(ev[g[g.length - 1]].time_ns) + ": " +
      Object.keys(kinds).sort().map(function (k) { return kinds[k] + " " + k; }).join(", ") + "\nclick to zoom in here";
  };

  Timeline.prototype.tipText = function (e) {
    var d = this.run.directives[e.directive];
    return e.text + "\nstep " + e.step + " · lane " + e.lane + (d ? " · directive " + d.pos + ": " + d.line : "") +
      (e.object ? "\nclick (or Enter) to follow " + e.object : "");
  };
  Timeline.prototype.showTip = function (text, x, y) {
    this.tip.textContent = text;
    this.tip.style.display = "block";
    this.tip.style.left = Math.max(0, Math.min(x + 14, window.innerWidth - 420)) + "px";
    this.tip.style.top = (y + 16) + "px";
  };

  // activate is a click on an event: follow its object (again: stop), select its directive's
  // narration line and its part of the pipeline.
  Timeline.prototype.activate = function (e) {
    var i = this.idxOfSeq[e.seq];
    this.focusSeq = e.seq;
    if (e.object) this.follow(e.object === this.followed ? "" : e.object, true);
    if (this.run.directives.length) this.selectDirective(e.directive, false, true);
    var c = this.run.components[this.laneOf[i]];
    this.picked = e.seq;
    this.root.dispatchEvent(new CustomEvent("tl-event", { detail: { seq: e.seq, lane: e.lane, stage: c.stage || "", directive: e.directive } }));
    this.render();
  };

  // layout places every drawn event on the time axis, in one pass. Compressed: each event its
  // own column in the trace's order, events at one instant side by side, and between instants a
  // gap that grows with the logarithm of the time between them (labelled with that time when it
  // is long). Linear: distance is time, the run fitting the window at zoom 1; events of one
  // lane at one instant are set a few pixels apart.
  Timeline.prototype.layout = function () {
    var ev = this.ev, n = this.n, xs = this.xs, zoom = this.zoom;
    var vw = (this.scroll && this.scroll.clientWidth) || 1000;
    this.gaps = [];
    if (this.mode === "linear") {
      var t0 = n ? ev[0].time_ns : 0, span = n ? Math.max(ev[n - 1].time_ns - t0, 1) : 1;
      var scale = (vw - 120) / span * zoom, lx = new Float64Array(this.run.components.length).fill(-1e18);
      var lt = new Float64Array(this.run.components.length).fill(-1);
      this.col = 4; this.t0 = t0; this.scale = scale;
      var maxX = 8;
      for (var i = 0; i < n; i++) {
        var li = this.laneOf[i], x = 8 + (ev[i].time_ns - t0) * scale;
        // Events of one lane at one instant stand 3 px apart, so each can be clicked; the
        // next instant of the lane is drawn no earlier than the last of them (the drift ends
        // where time moves on by more than the burst's width).
        if (ev[i].time_ns === lt[li]) x = lx[li] + 3; else if (x < lx[li] + 0.01) x = lx[li] + 0.01;
        xs[i] = x; lx[li] = x; lt[li] = ev[i].time_ns; if (x > maxX) maxX = x;
      }
      this.markW = 4;
      this.width = Math.ceil(maxX + 360);
      return;
    }
    var col = 9 * zoom, sq = Math.sqrt(zoom), x2 = 8, prev = null;
    for (var j = 0; j < n; j++) {
      var t = ev[j].time_ns;
      if (prev !== null) {
        if (t !== prev) {
          var gap = col + (6 + 10 * Math.log2(1 + (t - prev) / 1e6)) * sq;
          if (t - prev >= 1e6) this.gaps.push({ x0: x2 + col, x1: x2 + gap, ns: t - prev });
          x2 += gap;
        } else {
          x2 += col;
        }
      }
      xs[j] = x2; prev = t;
    }
    this.col = col;
    this.markW = Math.min(Math.max(3, col - 2), 10);
    // Room on the right for the violation's label.
    this.width = Math.ceil(x2 + col + 360);
  };

  // xAt is where time t falls: between the instants around it, in proportion.
  Timeline.prototype.xAt = function (t) {
    var ev = this.ev, xs = this.xs, n = this.n;
    if (n === 0) return 8;
    if (this.mode === "linear") return 8 + (t - this.t0) * this.scale;
    var lo = 0, hi = n - 1;
    if (t <= ev[0].time_ns) return xs[0];
    if (t >= ev[n - 1].time_ns) return xs[n - 1] + this.col;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (ev[mid].time_ns <= t) lo = mid; else hi = mid - 1; }
    var a = lo, b = lo + 1;
    while (b < n && ev[b].time_ns === ev[a].time_ns) b++;
    if (b >= n) return xs[a];
    var xa = xs[a] + this.col; // the gap starts after the instant's last column
    return xa + (t - ev[a].time_ns) / (ev[b].time_ns - ev[a].time_ns) * (xs[b] - xa);
  };

  Timeline.prototype.violationX = function () {
    var run = this.run, f = run.failure;
    if (!f) return null;
    if (this.failIdx >= 0) return this.xs[this.failIdx] + this.markW / 2;
    // Found between events (a convergence check): at the last event of the step it was found
    // at, or before it.
    var x = 8;
    for (var i = 0; i < this.n; i++) {
      var e = this.ev[i];
      if (e.time_ns > f.time_ns || (f.step > 0 && e.step > f.step)) break;
      x = this.xs[i] + this.markW + 3;
    }
    return x;
  };

  // isKey says an event is drawn on its own and keeps its label: a fault, an error, the
  // violation, a tombstone, the picked event, the followed object's and the selected directive's.
  Timeline.prototype.isKey = function (e, i) {
    return !!e.mark || e.seq === this.picked || e.fields.tombstone === true || !!(e.fields.obj && e.fields.obj.tombstone) || (this.followed !== "" && e.object === this.followed) || (this.selDir >= 0 && e.directive === this.selDir) || i === this.failIdx;
  };

  // render draws the part of the run in view (and MARGIN around it).
  Timeline.prototype.render = function () {
    var self = this, run = this.run, ev = this.ev, xs = this.xs;
    var sl = this.scroll.scrollLeft, vw = this.scroll.clientWidth || 1000;
    var lo = sl - MARGIN, hi = sl + vw + MARGIN, height = this.height, w = this.markW;
    this.drawnLeft = sl; this.drawnWidth = this.scroll.clientWidth;
    this.inner.style.width = this.width + "px";
    this.svg.style.left = sl + "px";
    this.svg.setAttribute("width", vw); this.svg.setAttribute("height", height);
    this.svg.setAttribute("data-width", this.width);
    this.svg.setAttribute("data-zoom", this.zoom);
    var out = [];
    this.blocks = [];
    out.push('<g transform="translate(' + (-sl) + ',0)">');
    // Lanes.
    out.push('<g class="lanes">');
    var laneBody = [];
    run.components.forEach(function (c, li) {
      var sel = self.selStages && self.selStages[c.stage] ? " lane-sel" : "";
      laneBody.push('<g class="lane role-' + esc(c.role) + sel + '" data-lane="' + esc(c.id) + '"><rect class="lane-bg" x="' + lo + '" y="' + (AXIS_H + li * LANE_H) + '" width="' + (hi - lo) + '" height="' + LANE_H + '"/>');
      laneBody.push(self.drawLane(li, lo, hi));
      laneBody.push("</g>");
    });
    // The axis, the gaps, the captions, the faults and the violation behind the marks.
    out.push(this.drawAxis(lo, hi));
    out.push(laneBody.join(""));
    out.push("</g>");
    out.push(this.drawArrows(lo, hi));
    var vx = this.violationX();
    if (vx !== null) {
      var f = run.failure;
      var lbl = (f.oracle ? "oracle " + f.oracle + " violated" : f.check ? 'check "' + f.check + '" failed' : "run failed") +
        (f.actor ? " at " + f.actor : "") + (f.object ? " · " + f.object : "") + " · step " + f.step;
      out.push('<line class="viol-line" x1="' + vx + '" x2="' + vx + '" y1="16" y2="' + height + '"/>');
      // The label reads away from the window's nearer edge.
      var right = vx - sl < vw / 2;
      out.push('<text class="viol-label" text-anchor="' + (right ? "start" : "end") + '" x="' + (right ? vx + 4 : vx - 4) + '" y="25">' + esc(lbl) + "</text>");
    }
    out.push("</g>");
    this.svg.innerHTML = out.join("");
    this.svg.classList.toggle("following", !!this.followed);
    if (this.focusSeq !== undefined) {
      var f2 = this.svg.querySelector('rect.ev[data-seq="' + this.focusSeq + '"]');
      if (f2 && document.activeElement !== f2 && this.root.contains(document.activeElement)) f2.focus({ preventScroll: true });
    }
    this.drawWindow();
  };

  Timeline.prototype.drawAxis = function (lo, hi) {
    var out = [], ev = this.ev, xs = this.xs, height = this.height, run = this.run;
    if (this.mode === "linear") {
      // Uniform ticks, 1-2-5 steps at least 90 px apart.
      var minNs = 90 / this.scale, step = Math.pow(10, Math.ceil(Math.log10(minNs)));
      if (step / 5 >= minNs) step /= 5; else if (step / 2 >= minNs) step /= 2;
      var tLo = this.t0 + (lo - 8) / this.scale, tHi = this.t0 + (hi - 8) / this.scale;
      for (var t = Math.max(0, Math.ceil(tLo / step) * step); t <= tHi; t += step) {
        var x = 8 + (t - this.t0) * this.scale;
        out.push('<line class="tick-line" x1="' + x + '" x2="' + x + '" y1="22" y2="' + height + '"/><text class="tick" x="' + (x + 2) + '" y="34">' + fmtTime(t) + "</text>");
      }
    } else {
      // A tick at an instant when there is room for its label; a long gap labelled with its length.
      var lastTickX = -1e9, lastT = null;
      var a = lowerBoundAll(xs, this.n, lo);
      for (var i = a; i < this.n && xs[i] <= hi; i++) {
        if (ev[i].time_ns === lastT) continue;
        lastT = ev[i].time_ns;
        if (xs[i] - lastTickX < 80) continue;
        lastTickX = xs[i];
        out.push('<line class="tick-line" x1="' + xs[i] + '" x2="' + xs[i] + '" y1="22" y2="' + height + '"/><text class="tick" x="' + (xs[i] + 2) + '" y="34">' + fmtTime(ev[i].time_ns) + "</text>");
      }
      this.gaps.forEach(function (g) {
        if (g.x1 < lo || g.x0 > hi || g.x1 - g.x0 < 22) return;
        var mid = (g.x0 + g.x1) / 2;
        out.push('<rect class="gap" x="' + g.x0 + '" y="38" width="' + (g.x1 - g.x0) + '" height="' + (height - 38) + '"/>');
        out.push('<text class="gap-label" x="' + mid + '" y="45">' + esc("⟷ " + fmtDur(g.ns)) + "</text>");
      });
    }
    // Captions at the first event of the directives that follow them.
    var lastCapEnd = -1e9;
    for (var di = 0; di < run.directives.length; di++) {
      var d = run.directives[di];
      if (!d.caption) continue;
      var j = firstOfDirective(ev, di);
      if (j < 0) continue;
      var cx = Math.max(xs[j] - 4, lastCapEnd + 8);
      lastCapEnd = cx + LABEL_PX * 1.1 * d.caption.length;
      if (cx > hi || lastCapEnd < lo) continue;
      out.push('<line class="cap-line" x1="' + cx + '" x2="' + cx + '" y1="2" y2="' + height + '"/><text class="cap" data-directive="' + di + '" x="' + (cx + 3) + '" y="14">' + esc(d.caption) + "</text>");
    }
    // Faults: a dashed line across every lane.
    for (var k = 0; k < this.n; k++) {
      if (ev[k].mark === "fault" && xs[k] >= lo && xs[k] <= hi) {
        var fx = xs[k] + this.markW / 2;
        out.push('<line class="fault-line" x1="' + fx + '" x2="' + fx + '" y1="' + AXIS_H + '" y2="' + height + '"/>');
      }
    }
    return out.join("");
  };

  function lowerBoundAll(xs, n, x) {
    var lo = 0, hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (xs[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
  }
  // firstOfDirective is the first drawn event of directive di or of the next one that has any.
  function firstOfDirective(ev, di) {
    var lo = 0, hi = ev.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (ev[mid].directive < di) lo = mid + 1; else hi = mid; }
    return lo < ev.length ? lo : -1;
  }

  // drawLane draws one lane's events in [lo, hi]: key events (marked, followed, the selected
  // directive's) each on their own and labelled; the others one by one where they are apart,
  // as a counted block where they are closer than AGG_PX; then the durations; then the labels
  // that fit.
  Timeline.prototype.drawLane = function (li, lo, hi) {
    var idx = this.laneEv[li], xs = this.xs, ev = this.ev, w = this.markW, run = this.run;
    var role = run.components[li].role, y = AXIS_H + li * LANE_H;
    var out = [], items = [];
    var a = lowerBound(idx, xs, lo - 40);
    var group = [];
    var self = this;
    var flush = function () {
      if (group.length === 0) return;
      if (group.length === 1) {
        items.push({ i: group[0], x: xs[group[0]], key: false });
      } else {
        items.push({ group: group, x: xs[group[0]], x1: xs[group[group.length - 1]] + w });
      }
      group = [];
    };
    for (var p = a; p < idx.length; p++) {
      var i = idx[p], x = xs[i];
      if (x > hi) break;
      if (this.isKey(ev[i], i)) { flush(); items.push({ i: i, x: x, key: true }); continue; }
      // A block grows while its events are closer than AGG_PX to the one before, up to
      // BLOCK_PX wide: a dense stretch is a few counted blocks, not one per AGG_PX.
      if (group.length && (x - xs[group[group.length - 1]] >= AGG_PX || x - xs[group[0]] >= BLOCK_PX)) flush();
      group.push(i);
    }
    flush();
    // Labels already placed on the lane's two rows (marks' labels first, bars' on the second).
    var placed = [], placed2 = [];
    // Durations: the bars that overlap the window.
    for (var b = 0; b < this.bars.length; b++) {
      var bar = this.bars[b];
      if (bar.lane !== li) continue;
      // On the linear axis a bar is its time exactly (a mark may stand a few px right of its
      // instant); on the compressed one it joins its marks.
      var lin = this.mode === "linear";
      var x0 = lin ? this.xAt(ev[bar.i0].time_ns) : xs[bar.i0], x1 = bar.i1 >= 0 && !lin ? xs[bar.i1] : this.xAt(bar.t1);
      if (x1 < lo || x0 > hi) continue;
      var bw = Math.max(x1 - x0, 2);
      out.push('<rect class="bar role-' + role + '" x="' + x0 + '" y="' + (y + BAR_Y) + '" width="' + bw + '" height="' + BAR_H + '"><title>' + esc(bar.label) + "</title></rect>");
      if (bw > bar.label.length * 5.4 + 6) {
        out.push('<text class="bar-label" x="' + (x0 + 3) + '" y="' + (y + BAR_Y + BAR_H + 1) + '">' + esc(bar.label) + "</text>");
        placed2.push([x0 + 3, x0 + 3 + bar.label.length * 5.4, -1]);
      }
    }
    // Marks.
    var labels = [];
    items.forEach(function (it) {
      if (it.group) {
        // A block: its events stay in this.blocks (the page holds only its index).
        var g = it.group, first = ev[g[0]], same = true;
        for (var q = 1; q < g.length; q++) if (ev[g[q]].kind !== first.kind) { same = false; break; }
        out.push('<rect class="ev-agg role-' + role + '" x="' + it.x + '" y="' + (y + MARK_Y) + '" width="' + Math.max(it.x1 - it.x, w) + '" height="' + MARK_H + '" data-b="' + self.blocks.length + '"/>');
        self.blocks.push(g);
        labels.push({ x: it.x, end: Math.max(it.x1, it.x + w), text: "×" + g.length + (same ? " " + first.kind : ""), key: false });
        return;
      }
      var e = ev[it.i];
      var cls = "ev role-" + role + (e.mark ? " mark-" + e.mark : "") + (self.followed && e.object === self.followed ? " hl" : "") + (self.selDir >= 0 && e.directive === self.selDir ? " dsel" : "") + (e.seq === self.picked ? " picked" : "");
      out.push('<rect class="' + cls + '" x="' + it.x + '" y="' + (y + MARK_Y) + '" width="' + w + '" height="' + MARK_H + '" rx="2" tabindex="0" role="button" data-i="' + it.i + '" data-seq="' + e.seq + '"' +
        (e.object ? ' data-object="' + esc(e.object) + '"' : "") + ' aria-label="' + esc(e.text) + '"/>');
      labels.push({ x: it.x, end: it.x + w, text: labelOf(e), key: it.key, cls: e.mark ? " lbl-" + e.mark : (self.followed && e.object === self.followed ? " lbl-hl" : "") });
    });
    // Labels right of their marks: the key ones first, always; the others where they fit
    // before the next mark and clear of the labels already placed.
    var fits = function (list, x0, x1) {
      for (var k = 0; k < list.length; k++) if (x0 < list[k][1] && x1 > list[k][0]) return false;
      return true;
    };
    var text = [];
    [true, false].forEach(function (keyPass) {
      for (var k = 0; k < labels.length; k++) {
        var l = labels[k];
        if (l.key !== keyPass) continue;
        var lx = l.end + 2, lw = l.text.length * LABEL_PX, row = 0;
        var next = k + 1 < labels.length ? labels[k + 1].x : Infinity;
        if (!keyPass) {
          if (lx + lw > next - 1 || !fits(placed, lx, lx + lw)) continue;
        } else if (!fits(placed, lx, lx + lw) || lx + lw > next - 1) {
          // A key label that would cover a label or the next mark goes to the lane's second
          // row (the bars'), if that is free there; else it stays on the first row if that
          // is free; else it is still drawn (a key event is never unlabelled), over others.
          if (fits(placed2, lx, lx + lw)) row = 1;
          else if (!fits(placed, lx, lx + lw)) {
            // Both rows are taken here: the label joins the one it collides with on the first
            // row ("MODIFIED b · DELETED b"), which grows to hold it.
            var host = null;
            for (var h = 0; h < placed.length; h++) if (lx < placed[h][1] && lx + lw > placed[h][0] && placed[h][2] >= 0) host = placed[h];
            if (host) {
              var hl = text[host[2]];
              if (hl.t.length < 40) {
                hl.t += " · " + l.text;
                host[1] += (l.text.length + 3) * LABEL_PX;
              } else {
                // A long joined label says how many more it stands for (room kept for that).
                if (!hl.more) host[1] += 9 * LABEL_PX;
                hl.more = (hl.more || 0) + 1;
              }
              continue;
            }
          }
        }
        (row ? placed2 : placed).push([lx, lx + lw, text.length]);
        text.push({ t: l.text, s: '<text class="ev-label' + (l.key ? " key" : "") + (l.cls || "") + '" x="' + lx + '" y="' + (y + (row ? LANE_H - 2 : MARK_Y + 11.5)) + '">' });
      }
    });
    return out.join("") + text.map(function (l) { return l.s + esc(l.t + (l.more ? " +" + l.more + " more" : "")) + "</text>"; }).join("");
  };

  // drawArrows draws the followed object's path: an arrow from each of its events to its next
  // one when that is in another lane.
  Timeline.prototype.drawArrows = function (lo, hi) {
    if (!this.followed || !this.path) return "";
    var out = [], xs = this.xs, w = this.markW, p = this.path, drawn = 0;
    for (var k = 0; k + 1 < p.length && drawn < 600; k++) {
      var a = p[k], b = p[k + 1];
      if (this.laneOf[a] === this.laneOf[b]) continue;
      var x0 = xs[a] + w, x1 = xs[b];
      if (Math.max(x0, x1) < lo || Math.min(x0, x1) > hi) continue;
      var y0 = AXIS_H + this.laneOf[a] * LANE_H + MARK_Y + MARK_H / 2, y1 = AXIS_H + this.laneOf[b] * LANE_H + MARK_Y + MARK_H / 2;
      var dx = Math.max(Math.abs(x1 - x0) / 2, 12);
      out.push('<path class="flow-arrow" marker-end="url(#tl-arrow)" d="M' + x0 + "," + y0 + " C" + (x0 + dx) + "," + y0 + " " + (x1 - dx) + "," + y1 + " " + x1 + "," + y1 + '"/>');
      drawn++;
    }
    return '<defs><marker id="tl-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" class="flow-head"/></marker></defs>' + out.join("");
  };

  // drawOverview draws every lane's density over the whole run: one row of pixels per lane,
  // darker where more events fall in a pixel; marks as red ticks through every row.
  Timeline.prototype.drawOverview = function () {
    var cv = this.ovCanvas, box = this.ovBox, L = this.run.components.length;
    var cw = Math.max(box.clientWidth, 100), rh = Math.max(2, Math.min(4, Math.floor(60 / Math.max(L, 1)))), ch = L * rh + 4;
    cv.width = cw; cv.height = ch; cv.style.width = cw + "px"; cv.style.height = ch + "px";
    box.style.height = ch + "px";
    var ctx = cv.getContext("2d"), counts = new Float32Array(L * cw), marks = [], xs = this.xs, W = this.width;
    for (var i = 0; i < this.n; i++) {
      var c = Math.min(cw - 1, Math.floor(xs[i] / W * cw));
      counts[this.laneOf[i] * cw + c]++;
      if (this.ev[i].mark) marks.push(c);
    }
    var style = getComputedStyle(this.root);
    var colors = this.run.components.map(function (comp) { return style.getPropertyValue("--" + comp.role).trim() || "#6b7280"; });
    ctx.clearRect(0, 0, cw, ch);
    for (var l = 0; l < L; l++) {
      ctx.fillStyle = colors[l];
      for (var x = 0; x < cw; x++) {
        var k = counts[l * cw + x];
        if (k === 0) continue;
        ctx.globalAlpha = Math.min(1, 0.3 + k / 6);
        ctx.fillRect(x, 2 + l * rh, 1, rh);
      }
    }
    ctx.globalAlpha = 1;
    ctx.fillStyle = style.getPropertyValue("--violation").trim() || "#d00";
    marks.forEach(function (x) { ctx.fillRect(x, 0, 1, ch); });
  };

  Timeline.prototype.drawWindow = function () {
    var cw = this.ovBox.clientWidth || 100, W = Math.max(this.width, 1);
    var l = this.scroll.scrollLeft / W * cw, w = Math.max(4, (this.scroll.clientWidth || 0) / W * cw);
    this.ovWin.style.left = l + "px"; this.ovWin.style.width = Math.min(w, cw - l) + "px";
  };

  // redraw lays the run out again (a zoom, the axis switched) keeping the point at anchor (a
  // fraction of the window's width) on the same moment.
  Timeline.prototype.redraw = function (anchorFrac) {
    var vw = this.scroll.clientWidth || 1000, f = anchorFrac === undefined ? 0.5 : anchorFrac;
    var t = this.timeAtX(this.scroll.scrollLeft + f * vw);
    this.layout();
    this.inner.style.width = this.width + "px";
    this.scroll.scrollLeft = this.xAt(t) - f * vw;
    this.drawOverview();
    this.render();
    this.updateStatus();
  };

  // timeAtX is the simulated time at x, the inverse of xAt.
  Timeline.prototype.timeAtX = function (x) {
    var ev = this.ev, xs = this.xs, n = this.n;
    if (n === 0 || !this.width) return 0;
    if (this.mode === "linear" && this.scale) return this.t0 + (x - 8) / this.scale;
    var i = lowerBoundAll(xs, n, x);
    if (i <= 0) return ev[0].time_ns;
    if (i >= n) return ev[n - 1].time_ns;
    var a = i - 1, xa = xs[a], xb = xs[i];
    return ev[a].time_ns + (xb > xa ? (x - xa) / (xb - xa) : 0) * (ev[i].time_ns - ev[a].time_ns);
  };

  Timeline.prototype.setZoom = function (z) {
    this.zoom = Math.min(Math.max(z, MIN_ZOOM), 40);
    this.redraw(0.5);
  };
  // setMode switches the time axis. The linear axis opens on the whole run (zoom 1 fits it);
  // the compressed one at zoom 1 on the moment that was in the middle, fitted if it is short.
  Timeline.prototype.setMode = function (m) {
    this.mode = m;
    this.zoom = 1;
    if (m === "linear") {
      this.layout();
      this.inner.style.width = this.width + "px";
      this.scroll.scrollLeft = 0;
      this.drawOverview(); this.render(); this.updateStatus();
      return;
    }
    this.redraw(0.5);
    if (this.width < (this.scroll.clientWidth || 800) * 1.6) this.fit();
  };
  // zoomAround zooms in on a block of events (by its first event's seq) so that it spreads.
  Timeline.prototype.zoomAround = function (seq) {
    var i = this.idxOfSeq[seq];
    this.zoom = Math.min(this.zoom * 3, 40);
    this.layout();
    this.scroll.scrollLeft = this.xs[i] - (this.scroll.clientWidth || 1000) / 3;
    this.drawOverview(); this.render(); this.updateStatus();
  };

  // fit picks the largest zoom (at most 6) at which the whole run fits the window's width.
  Timeline.prototype.fit = function () {
    var avail = this.scroll.clientWidth || 800, lo = MIN_ZOOM, hi = 6;
    for (var i = 0; i < 20; i++) {
      var mid = Math.sqrt(lo * hi);
      this.zoom = mid; this.layout();
      if (this.width <= avail) lo = mid; else hi = mid;
    }
    this.zoom = lo; this.layout();
    this.scroll.scrollLeft = 0;
    this.drawOverview(); this.render(); this.updateStatus();
  };

  // reveal scrolls the event seq into the middle of the window and draws it; pick also marks it
  // as the one picked (from a line of the history or of the failure report).
  Timeline.prototype.reveal = function (seq, pick) {
    var i = this.idxOfSeq[seq];
    if (i === undefined) return;
    if (pick) this.picked = seq;
    this.scroll.scrollLeft = this.xs[i] - (this.scroll.clientWidth || 1000) / 2;
    this.render();
  };

  // follow highlights every event about one object (by its key, "ns/name") in every lane,
  // arrows along its path, and lists them, the object's history, under the timeline.
  Timeline.prototype.follow = function (key, noRender) {
    this.followed = key || "";
    this.sel.value = this.followed;
    var self = this, lines = [], lanes = {}, path = [];
    for (var i = 0; i < this.n; i++) {
      var e = this.ev[i];
      if (self.followed && e.object === self.followed) { path.push(i); lines.push(e); lanes[e.lane] = true; }
    }
    this.path = path;
    this.followedBox.innerHTML = "";
    if (this.followed) {
      var h = document.createElement("div");
      h.textContent = "History of " + this.followed + ": " + path.length + " events in " + Object.keys(lanes).length + " lanes (click a line to see its event)";
      var pre = document.createElement("pre"); pre.className = "followed-history";
      lines.forEach(function (e, k) {
        var s = document.createElement("span"); s.className = "hist-line"; s.dataset.seq = e.seq;
        s.textContent = e.text; pre.appendChild(s);
        if (k + 1 < lines.length) pre.appendChild(document.createTextNode("\n"));
      });
      pre.addEventListener("click", function (ev) { var s = ev.target.closest(".hist-line"); if (s) self.reveal(+s.dataset.seq, true); });
      this.followedBox.appendChild(h); this.followedBox.appendChild(pre);
      this.followedBox.style.display = "block";
    } else {
      this.followedBox.style.display = "none";
    }
    if (!noRender) this.render();
    this.updateStatus();
  };

  // selectDirective highlights the events of directive di (a narration line), labels them, and
  // (scroll) brings its first event into view; it tells the page (event "tl-directive").
  Timeline.prototype.selectDirective = function (di, scroll, noRender) {
    this.selDir = di;
    if (scroll) {
      var j = firstOfDirective(this.ev, di);
      if (j >= 0 && this.ev[j].directive === di) {
        var vw = this.scroll.clientWidth || 1000, x = this.xs[j];
        if (x < this.scroll.scrollLeft + 20 || x > this.scroll.scrollLeft + vw - 60) this.scroll.scrollLeft = x - vw / 4;
      }
    }
    if (!noRender) this.render();
    this.root.dispatchEvent(new CustomEvent("tl-directive", { detail: { directive: di } }));
  };

  // selectStages highlights the lanes of the pipeline's parts named (a box of the picture).
  Timeline.prototype.selectStages = function (parts) {
    this.selStages = null;
    var self = this;
    if (parts && parts.length) { this.selStages = {}; parts.forEach(function (p) { self.selStages[p] = true; }); }
    this.laneLabels.forEach(function (d) { d.classList.toggle("lane-sel", !!self.selStages && !!self.selStages[d.dataset.stage]); });
    this.render();
  };

  Timeline.prototype.updateStatus = function () {
    var run = this.run;
    var s = this.n + " events · " + run.components.length + " lanes · seed " + run.seed + " · " +
      (run.failure ? "FAILED" : "passed") + " · trace " + run.trace.hash.slice(0, 12) + " · zoom " + (this.zoom >= 0.1 ? this.zoom.toFixed(2) : this.zoom.toPrecision(2));
    if (this.followed) s += " · following " + this.followed;
    this.status.textContent = s;
    this.modeBtn.textContent = "time axis: " + this.mode + " ⇄";
    this.modeBtn.setAttribute("aria-pressed", this.mode === "linear" ? "true" : "false");
    this.axisLabel.textContent = this.mode === "linear" ? "simulated time (linear) →" : "simulated time (compressed) →";
  };

  // open draws the run the first time: a short run stretched to the window's width, a long one
  // at zoom 1 opened at its failure, else at its first fault or caption after the start.
  Timeline.prototype.open = function () {
    this.layout();
    var vw = this.scroll.clientWidth || 800;
    // Up to a screen and a half is fitted (a lesson reads whole); longer runs open at zoom 1.
    if (this.width < vw * 1.6) { this.fit(); return; }
    var target = -1;
    if (this.run.failure) {
      var vx = this.violationX();
      this.inner.style.width = this.width + "px";
      this.scroll.scrollLeft = vx - vw * 0.6;
    } else {
      for (var i = 0; i < this.n; i++) if (this.ev[i].mark) { target = i; break; }
      var run = this.run;
      for (var di = 0; di < run.directives.length; di++) {
        if (!run.directives[di].caption) continue;
        var j = firstOfDirective(this.ev, di);
        if (j > 0 && (target < 0 || j < target)) { target = j; }
        if (j > 0) break;
      }
      this.inner.style.width = this.width + "px";
      if (target > 0) this.scroll.scrollLeft = this.xs[target] - vw * 0.15;
    }
    this.drawOverview(); this.render(); this.updateStatus();
  };

  // The page around the timeline: narration lines, the pipeline's boxes and the marks follow
  // one another (click one, the others show it).
  function wire(tl) {
    var lines = document.querySelectorAll("[data-directive].nl");
    var setCurrent = function (di, scrollIt) {
      lines.forEach(function (l) { l.classList.toggle("current", +l.dataset.directive === di); });
      var cur = document.querySelector('.nl.current');
      var box = document.querySelector(".narration-box");
      if (cur && box && scrollIt) box.scrollTop = cur.offsetTop - box.offsetTop - box.clientHeight / 3;
    };
    lines.forEach(function (l) {
      var go = function () { tl.selectDirective(+l.dataset.directive, true); setCurrent(+l.dataset.directive, false); document.getElementById("timeline").scrollIntoView({ block: "nearest" }); };
      l.addEventListener("click", go);
      l.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); go(); } });
    });
    tl.root.addEventListener("tl-directive", function (ev) { setCurrent(ev.detail.directive, true); });
    var boxes = document.querySelectorAll("svg.pipeline [data-parts]");
    var setBox = function (stage) {
      boxes.forEach(function (b) { b.classList.toggle("current", !!stage && b.dataset.parts.split(" ").indexOf(stage) >= 0 && b.tagName !== "rect"); });
    };
    boxes.forEach(function (b) {
      if (b.tagName === "rect") return; // the SharedIndexInformer's frame
      b.addEventListener("click", function () {
        var on = !b.classList.contains("current");
        boxes.forEach(function (o) { o.classList.remove("current"); });
        b.classList.toggle("current", on);
        tl.selectStages(on ? b.dataset.parts.split(" ") : null);
      });
    });
    tl.root.addEventListener("tl-event", function (ev) { setBox(ev.detail.stage); tl.selectStages(ev.detail.stage ? [ev.detail.stage] : null); });
    linkReport(tl);
  }

  // linkReport makes each line of the failure report that is a drawn event ("  STEP  +TIME
  // ACTOR KIND FIELDS", ">" on the violating one) a link to it, and the reverse: clicking an
  // event makes its report line the current one.
  function linkReport(tl) {
    var pre = document.querySelector(".failure-report");
    if (!pre) return;
    var byKey = {};
    tl.ev.forEach(function (e, i) {
      var k = e.step + "|" + e.actor + "|" + e.kind;
      (byKey[k] = byKey[k] || []).push(i);
    });
    var norm = function (s) { return s.trim().split(/\s+/).join(" "); };
    var text = pre.textContent, lines = text.split("\n");
    pre.textContent = "";
    lines.forEach(function (line, n) {
      var span = document.createElement("span"); span.textContent = line;
      var m = /^\s*>?\s*(\d+)\s+\+\S+\s+(\S+)\s+(\S+)(.*)$/.exec(line);
      var cands = m ? byKey[m[1] + "|" + m[2] + "|" + m[3]] : null;
      if (cands) {
        // Of the step's events of that actor and kind, the one with these fields.
        var pick = cands[0], fields = norm(m[4]);
        cands.forEach(function (i) {
          var e = tl.ev[i], at = e.text.indexOf(": " + e.kind);
          if (at >= 0 && norm(e.text.slice(at + 2 + e.kind.length)) === fields) pick = i;
        });
        span.className = "rep-line"; span.dataset.seq = tl.ev[pick].seq;
        span.title = "click to see this event in the timeline";
      }
      pre.appendChild(span);
      if (n + 1 < lines.length) pre.appendChild(document.createTextNode("\n"));
    });
    pre.addEventListener("click", function (ev) {
      var s = ev.target.closest(".rep-line");
      if (!s) return;
      pre.querySelectorAll(".rep-line.current").forEach(function (c) { c.classList.remove("current"); });
      s.classList.add("current");
      tl.reveal(+s.dataset.seq, true);
      document.getElementById("timeline").scrollIntoView({ block: "nearest" });
    });
    tl.root.addEventListener("tl-event", function (ev) {
      var cur = null;
      pre.querySelectorAll(".rep-line").forEach(function (c) {
        var on = +c.dataset.seq === ev.detail.seq;
        c.classList.toggle("current", on);
        if (on) cur = c;
      });
      if (cur) pre.scrollTop = cur.offsetTop - pre.offsetTop - pre.clientHeight / 3;
    });
  }

  function start() {
    var data = document.getElementById("run-data");
    var root = document.getElementById("timeline");
    if (!data || !root) return;
    var run = JSON.parse(data.textContent);
    var tl = new Timeline(root, run);
    window.informersimTimeline = tl;
    var m = /(?:^|[#&])follow=([^&]+)/.exec(location.hash);
    // A failing run opens with the object it is about followed.
    var key = m ? decodeURIComponent(m[1]) : run.failure && run.failure.object ? run.failure.object : "";
    if (key) tl.follow(key, true);
    tl.open();
    wire(tl);
    window.addEventListener("resize", function () { tl.drawOverview(); tl.render(); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
