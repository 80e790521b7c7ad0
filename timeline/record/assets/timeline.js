// The timeline of a run, drawn from the run's JSON document (docs/run.schema.json) embedded in
// the page as <script id="run-data" type="application/json">. No network, no library.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var LANE_H = 22, AXIS_H = 40, LABEL_MIN = 34;

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmtTime(ns) {
    var s = ns / 1e9;
    return "+" + (s < 1 ? s.toFixed(4) : s < 100 ? s.toFixed(3) : s.toFixed(1)) + "s";
  }

  function Timeline(root, run) {
    this.root = root; this.run = run; this.zoom = 1; this.followed = "";
    this.byLane = {}; this.laneIndex = {};
    var self = this;
    run.components.forEach(function (c, i) { self.laneIndex[c.id] = i; });
    // The scheduler's step events are left out, as the narration leaves them out.
    this.visible = run.events.filter(function (e) { return !e.scheduler; });
    this.dirOf = run.directives;
    this.build();
    this.draw();
  }

  Timeline.prototype.build = function () {
    var self = this, run = this.run, root = this.root;
    root.innerHTML = "";
    var bar = document.createElement("div"); bar.className = "tl-bar"; root.appendChild(bar);
    var lab = document.createElement("label"); lab.textContent = "Follow an object ";
    var sel = document.createElement("select"); sel.className = "tl-follow"; lab.appendChild(sel); bar.appendChild(lab);
    var none = document.createElement("option"); none.value = ""; none.textContent = "(none: click an event)"; sel.appendChild(none);
    var keys = {};
    this.visible.forEach(function (e) { if (e.object) keys[e.object] = true; });
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
    this.status = document.createElement("span"); this.status.className = "tl-status"; bar.appendChild(this.status);

    var body = document.createElement("div"); body.className = "tl-body"; root.appendChild(body);
    var labels = document.createElement("div"); labels.className = "tl-labels"; body.appendChild(labels);
    var ax = document.createElement("div"); ax.className = "axis-label"; ax.textContent = "simulated time →"; labels.appendChild(ax);
    run.components.forEach(function (c) {
      var d = document.createElement("div"); d.className = "lane-label role-" + c.role; d.dataset.lane = c.id;
      d.textContent = c.label; d.title = c.label + " — client-go: " + c.clientgo; labels.appendChild(d);
    });
    this.scroll = document.createElement("div"); this.scroll.className = "tl-scroll"; body.appendChild(this.scroll);
    this.svg = el("svg", { "class": "tl-svg" }, this.scroll);
    this.scroll.addEventListener("wheel", function (ev) {
      if (!ev.ctrlKey) return;
      ev.preventDefault(); self.setZoom(self.zoom * (ev.deltaY < 0 ? 1.25 : 0.8));
    }, { passive: false });

    var legend = document.createElement("div"); legend.className = "tl-legend"; root.appendChild(legend);
    var roles = {};
    run.components.forEach(function (c) { roles[c.role] = roles[c.role] || c.clientgo; });
    Object.keys(roles).forEach(function (r) {
      var s = document.createElement("span"); s.className = "role-" + r; s.textContent = r + " (" + roles[r] + ")"; legend.appendChild(s);
    });
    [["fault", "injected fault"], ["error", "error answer / dropped stream"], ["violation", "oracle violation"]].forEach(function (m) {
      var s = document.createElement("span"); s.className = "mark-" + m[0] + "-key"; s.textContent = m[1]; legend.appendChild(s);
    });

    this.followedBox = document.createElement("div"); this.followedBox.className = "tl-followed"; root.appendChild(this.followedBox);
    this.tip = document.createElement("div"); this.tip.className = "tl-tip"; root.appendChild(this.tip);
  };

  // layout places the visible events on simulated time: each event its own column, and a gap
  // between events at different times that grows with the logarithm of the time between them
  // (a run is bursts a few microseconds apart separated by seconds of nothing).
  Timeline.prototype.layout = function () {
    var col = 9 * this.zoom, x = 8, prev = null, xs = [];
    this.visible.forEach(function (e) {
      if (prev !== null) {
        if (e.time_ns !== prev) {
          var ms = (e.time_ns - prev) / 1e6;
          x += col + (6 + 10 * Math.log2(1 + ms)) * Math.sqrt(this.zoom);
        } else {
          x += col;
        }
      }
      xs.push(x); prev = e.time_ns;
    }, this);
    this.xs = xs; this.col = col;
    // Room on the right for the violation's label.
    this.width = Math.ceil(x + col + 320);
  };

  Timeline.prototype.draw = function () {
    var self = this, run = this.run, svg = this.svg;
    this.layout();
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var height = AXIS_H + run.components.length * LANE_H + 4;
    svg.setAttribute("width", this.width); svg.setAttribute("height", height);
    var lanes = el("g", { "class": "lanes" }, svg);
    this.laneG = {};
    run.components.forEach(function (c, i) {
      var g = el("g", { "class": "lane role-" + c.role, "data-lane": c.id }, lanes);
      el("rect", { "class": "lane-bg", x: 0, y: AXIS_H + i * LANE_H, width: self.width, height: LANE_H }, g);
      self.laneG[c.id] = g;
    });
    // The time axis: a tick where the time changes, when there is room for its label.
    var lastTickX = -1e9, lastT = null;
    this.visible.forEach(function (e, i) {
      if (e.time_ns === lastT) return;
      lastT = e.time_ns;
      var x = self.xs[i];
      if (x - lastTickX < 70) return;
      lastTickX = x;
      el("line", { "class": "tick-line", x1: x, x2: x, y1: 22, y2: height }, svg);
      el("text", { "class": "tick", x: x + 2, y: 34 }, svg).textContent = fmtTime(e.time_ns);
    });
    // Captions at the first event of the directives that follow them.
    var firstVisible = {};
    this.visible.forEach(function (e, i) { if (!(e.directive in firstVisible)) firstVisible[e.directive] = i; });
    var lastCapX = -1e9;
    run.directives.forEach(function (d, di) {
      if (!d.caption) return;
      var j = di; while (j < run.directives.length && !(j in firstVisible)) j++;
      if (!(j in firstVisible)) return;
      var x = Math.max(self.xs[firstVisible[j]] - 4, lastCapX + 8);
      el("line", { "class": "cap-line", x1: x, x2: x, y1: 2, y2: height }, svg);
      var t = el("text", { "class": "cap", x: x + 3, y: 14 }, svg); t.textContent = d.caption;
      lastCapX = x + 7 * d.caption.length;
    });
    var w = Math.max(3, this.col - 2);
    this.visible.forEach(function (e, i) {
      var li = self.laneIndex[e.lane];
      var c = run.components[li];
      var x = self.xs[i], y = AXIS_H + li * LANE_H + 3;
      if (e.mark === "fault") el("line", { "class": "fault-line", x1: x + w / 2, x2: x + w / 2, y1: AXIS_H, y2: height }, svg);
      var cls = "ev role-" + c.role + (e.mark ? " mark-" + e.mark : "") + (self.followed && e.object === self.followed ? " hl" : "");
      var r = el("rect", { "class": cls, x: x, y: y, width: w, height: LANE_H - 6, rx: 2, "data-seq": e.seq }, self.laneG[e.lane]);
      if (e.object) r.setAttribute("data-object", e.object);
      r.__ev = e;
      if (self.col >= LABEL_MIN) {
        // The kind and, when the event has one, its resourceVersion (an update's new one).
        var rv = e.fields.rv, label = e.kind;
        if (typeof rv === "number") label += " " + rv; else if (rv && typeof rv === "object") label += " " + rv.to;
        el("text", { "class": "ev-label", x: x + 2, y: y + 12 }, self.laneG[e.lane]).textContent = label.slice(0, Math.floor(self.col / 6));
      }
    });
    if (run.failure) {
      var fx = null;
      if (run.failure.event !== null) {
        this.visible.forEach(function (e, i) { if (e.seq === run.failure.event) fx = self.xs[i] + w / 2; });
      }
      if (fx === null) {
        // No violating event in the trace (a convergence check between events): the mark goes
        // after the last event at or before the failure's time.
        fx = 8;
        this.visible.forEach(function (e, i) { if (e.time_ns <= run.failure.time_ns) fx = self.xs[i] + w + 3; });
      }
      el("line", { "class": "viol-line", x1: fx, x2: fx, y1: 16, y2: height }, svg);
      var lbl = el("text", { "class": "viol-label", x: fx + 4, y: 28 }, svg);
      lbl.textContent = (run.failure.oracle ? "oracle " + run.failure.oracle + " violated" : "run failed");
    }
    svg.onmousemove = function (ev) {
      var e = ev.target.__ev;
      if (!e) { self.tip.style.display = "none"; return; }
      var d = run.directives[e.directive];
      self.tip.textContent = e.text + "\n" + "step " + e.step + " · lane " + e.lane + (d ? " · directive " + d.pos + ": " + d.line : "") +
        (e.object ? "\nclick to follow " + e.object : "");
      self.tip.style.display = "block";
      self.tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 420) + "px";
      self.tip.style.top = (ev.clientY + 16) + "px";
    };
    svg.onmouseleave = function () { self.tip.style.display = "none"; };
    svg.onclick = function (ev) {
      var e = ev.target.__ev;
      if (e && e.object) self.follow(e.object === self.followed ? "" : e.object);
    };
    this.svg.classList.toggle("following", !!this.followed);
    this.updateStatus();
  };

  Timeline.prototype.setZoom = function (z) {
    var center = (this.scroll.scrollLeft + this.scroll.clientWidth / 2) / Math.max(this.width, 1);
    this.zoom = Math.min(Math.max(z, 0.05), 12);
    this.draw();
    this.scroll.scrollLeft = center * this.width - this.scroll.clientWidth / 2;
  };

  // fit picks the largest zoom (at most 6) at which the whole run fits the window's width.
  Timeline.prototype.fit = function () {
    var avail = this.scroll.clientWidth || 800, lo = 0.05, hi = 6;
    for (var i = 0; i < 30; i++) {
      var mid = (lo + hi) / 2;
      this.zoom = mid; this.layout();
      if (this.width <= avail) lo = mid; else hi = mid;
    }
    this.setZoom(lo);
  };

  // follow highlights every event about one object (by its key, "ns/name") in every lane, and
  // lists them, the object's history, under the timeline.
  Timeline.prototype.follow = function (key) {
    this.followed = key || "";
    this.sel.value = this.followed;
    var self = this, n = 0, lines = [], lanes = {};
    this.svg.querySelectorAll(".ev").forEach(function (r) {
      r.classList.toggle("hl", !!self.followed && r.__ev.object === self.followed);
    });
    // The history in the trace's order (the marks are grouped by lane).
    this.visible.forEach(function (e) {
      if (self.followed && e.object === self.followed) { n++; lines.push(e.text); lanes[e.lane] = true; }
    });
    this.svg.classList.toggle("following", !!this.followed);
    this.followedBox.innerHTML = "";
    if (this.followed) {
      var h = document.createElement("div");
      h.textContent = "History of " + this.followed + ": " + n + " events in " + Object.keys(lanes).length + " lanes";
      var pre = document.createElement("pre"); pre.className = "followed-history"; pre.textContent = lines.join("\n");
      this.followedBox.appendChild(h); this.followedBox.appendChild(pre);
      this.followedBox.style.display = "block";
    } else {
      this.followedBox.style.display = "none";
    }
    this.updateStatus();
  };

  Timeline.prototype.updateStatus = function () {
    var run = this.run;
    var s = this.visible.length + " events · " + run.components.length + " lanes · seed " + run.seed + " · " +
      (run.failure ? "FAILED" : "passed") + " · trace " + run.trace.hash.slice(0, 12);
    if (this.followed) s += " · following " + this.followed;
    this.status.textContent = s;
  };

  function start() {
    var data = document.getElementById("run-data");
    var root = document.getElementById("timeline");
    if (!data || !root) return;
    var run = JSON.parse(data.textContent);
    var tl = new Timeline(root, run);
    // A short run is stretched to the window's width, a long one starts at zoom 1 (scroll).
    tl.layout();
    if (tl.width < (tl.scroll.clientWidth || 800)) tl.fit();
    window.informersimTimeline = tl;
    var m = /(?:^|[#&])follow=([^&]+)/.exec(location.hash);
    if (m) tl.follow(decodeURIComponent(m[1]));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
