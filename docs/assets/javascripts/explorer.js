/* posenc explorer (docs/explorer.md, docs/explorer.zh.md).

   Four panels, each computed in the browser and drawn as inline SVG:
     frequencies  RoPE frequencies θ_i and periods 2π/θ_i for a head size and base
     scaling      what PI, NTK-aware, dynamic NTK, YaRN and Llama 3 scaling do to each pair
     distance     the attention score against distance (aligned pairs, seeded random q and k)
     alibi        ALiBi slopes (Press et al.'s rule, any head count) and one head's bias matrix

   The numbers follow posenc's source (src/posenc/rope_scaling.py, rope.py, alibi.py) step by
   step, rounding every float32 operation with Math.fround, so the page agrees with the library
   to float32 precision; tests/browser/test_explorer.py sets the controls and compares.

   The pages hold the words (labels, captions, table headers, in their language); this file
   builds the inputs, fills <output data-out> and <table data-table>, and draws the charts.
   It runs on every page load, and again when material's instant navigation brings the
   page in (material re-runs the scripts of the new content; document$ is a second way in). */
(function () {
  "use strict";

  if (window.posencExplorer) {
    window.posencExplorer.init();
    return;
  }

  var f32 = Math.fround;
  var TWO_PI = 2 * Math.PI;
  var SVG = "http://www.w3.org/2000/svg";

  // ── the numbers: posenc's formulas in float32 ────────────────────────────────────────────

  // 2i/d in float32 (torch.arange(0, d, 2).float() / d)
  function exponents(d) {
    var out = new Float64Array(d / 2);
    for (var i = 0; i < d / 2; i++) out[i] = f32((2 * i) / d);
    return out;
  }

  // base ** (2i/d) in float32: torch casts the Python float base to float32 first
  function basePowers(d, base) {
    var b = f32(base);
    return exponents(d).map(function (e) { return f32(Math.pow(b, e)); });
  }

  // θ_i = base^(-2i/d): posenc.default_inv_freq
  function defaultInvFreq(d, base) {
    return basePowers(d, base).map(function (p) { return f32(1 / p); });
  }

  function yarnMscale(scale, mscale) {
    return scale <= 1 ? 1 : 0.1 * (mscale === undefined ? 1 : mscale) * Math.log(scale) + 1;
  }

  function yarnCorrectionDim(rotations, d, base, original) {
    return (d * Math.log(original / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
  }

  /* posenc.rope_inv_freq(d, base=base, scaling=..., seq_len=...) for one method:
       {method: "default" | "linear" | "ntk" | "dynamic" | "yarn" | "llama3",
        factor, original, seqLen, betaFast, betaSlow, truncate, lowFreqFactor, highFreqFactor}
     Returns {inv, factor (attention factor), base (the base the frequencies use),
              gamma (share of each pair kept, YaRN and Llama 3), ramp ({low, high}, YaRN),
              bands ({kept, interpolated} wavelength thresholds, Llama 3)}.
     "ntk" (static NTK-aware) has no rope_type of its own: it is the default frequencies of
     the base b·s^(d/(d-2)). */
  function ropeInvFreq(d, base, scaling) {
    var method = scaling.method;
    var s = scaling.factor;
    var result = { inv: null, factor: 1, base: base, gamma: null, ramp: null, bands: null };
    if (method === "default") {
      result.inv = defaultInvFreq(d, base);
    } else if (method === "linear") {
      result.inv = defaultInvFreq(d, base).map(function (t) { return f32(t / f32(s)); });
    } else if (method === "ntk") {
      result.base = base * Math.pow(s, d / (d - 2));
      result.inv = defaultInvFreq(d, result.base);
    } else if (method === "dynamic") {
      var length = Math.max(scaling.seqLen, scaling.original);
      result.base = base * Math.pow((s * length) / scaling.original - (s - 1), d / (d - 2));
      result.inv = defaultInvFreq(d, result.base);
    } else if (method === "yarn") {
      result.factor = yarnMscale(s);
      var low = yarnCorrectionDim(scaling.betaFast, d, base, scaling.original);
      var high = yarnCorrectionDim(scaling.betaSlow, d, base, scaling.original);
      if (scaling.truncate) {
        low = Math.floor(low);
        high = Math.ceil(high);
      }
      low = Math.max(low, 0);
      high = Math.min(high, d - 1);
      if (low === high) high += 0.001; // no zero-width ramp
      result.ramp = { low: low, high: high };
      var lowF = f32(low), width = f32(high - low), sF = f32(s);
      var powers = basePowers(d, base);
      result.gamma = new Float64Array(d / 2);
      result.inv = new Float64Array(d / 2);
      for (var i = 0; i < d / 2; i++) {
        var ramp = f32(f32(i - lowF) / width);
        ramp = Math.min(Math.max(ramp, 0), 1);
        var keep = f32(1 - ramp);
        var extrapolated = f32(1 / powers[i]);
        var interpolated = f32(1 / f32(sF * powers[i]));
        result.gamma[i] = keep;
        result.inv[i] = f32(f32(interpolated * f32(1 - keep)) + f32(extrapolated * keep));
      }
    } else if (method === "llama3") {
      var inv = defaultInvFreq(d, base);
      var lowWavelen = scaling.original / scaling.lowFreqFactor;
      var highWavelen = scaling.original / scaling.highFreqFactor;
      var lowW = f32(lowWavelen), highW = f32(highWavelen);
      var span = f32(scaling.highFreqFactor - scaling.lowFreqFactor);
      var original = f32(scaling.original), lowFF = f32(scaling.lowFreqFactor), sL = f32(s);
      var twoPi = f32(TWO_PI);
      result.bands = { kept: highWavelen, interpolated: lowWavelen };
      result.gamma = new Float64Array(d / 2);
      result.inv = new Float64Array(d / 2);
      for (var j = 0; j < d / 2; j++) {
        var wavelen = f32(f32(1 / inv[j]) * twoPi); // 2π / θ: reciprocal, then times 2π
        var scaled = wavelen > lowW ? f32(inv[j] / sL) : inv[j];
        var smooth = f32(f32(f32(f32(1 / wavelen) * original) - lowFF) / span);
        var medium = !(wavelen < highW) && !(wavelen > lowW);
        if (medium) {
          result.inv[j] = f32(f32(f32(f32(1 - smooth) * scaled) / sL) + f32(smooth * scaled));
          result.gamma[j] = smooth;
        } else {
          result.inv[j] = scaled;
          result.gamma[j] = wavelen > lowW ? 0 : 1;
        }
      }
    } else {
      throw new Error("unknown method " + method);
    }
    return result;
  }

  // mean_i cos(r·θ_i), the angle r·θ_i rounded to float32 as posenc.rotary_cos_sin has it:
  // the score <R_r q, k> / d of q = k = all ones (every pair aligned), 1 at r = 0.
  function alignedScore(inv, r) {
    var sum = 0;
    for (var i = 0; i < inv.length; i++) sum += Math.cos(f32(r * inv[i]));
    return sum / inv.length;
  }

  // <R_r q, k> / (|q| |k|) for q, k given as d/2 pairs [x_i, y_i] (pair i turns by r·θ_i)
  function rotatedScore(inv, q, k, r) {
    var dot = 0;
    for (var i = 0; i < inv.length; i++) {
      var angle = f32(r * inv[i]), c = Math.cos(angle), s = Math.sin(angle);
      var qx = q[2 * i], qy = q[2 * i + 1], kx = k[2 * i], ky = k[2 * i + 1];
      dot += (qx * c - qy * s) * kx + (qx * s + qy * c) * ky;
    }
    return dot / (norm(q) * norm(k));
  }

  function norm(v) {
    var sum = 0;
    for (var i = 0; i < v.length; i++) sum += v[i] * v[i];
    return Math.sqrt(sum);
  }

  // A seeded stream of standard normal numbers (mulberry32 + Box–Muller), rounded to float32
  // so that the vectors the page uses are exactly representable in posenc's float32 tensors.
  function normals(seed, count) {
    var state = seed >>> 0;
    function uniform() {
      state = (state + 0x6d2b79f5) >>> 0;
      var t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    var out = new Float64Array(count);
    for (var i = 0; i < count; i += 2) {
      var u = 1 - uniform(), v = uniform();
      var radius = Math.sqrt(-2 * Math.log(u));
      out[i] = f32(radius * Math.cos(TWO_PI * v));
      if (i + 1 < count) out[i + 1] = f32(radius * Math.sin(TWO_PI * v));
    }
    return out;
  }

  /* ALiBi slopes, Press et al.'s rule (posenc.alibi_slope_values): for p = 2^floor(log2 n),
     the p slopes 2^(-8h/p), then the first n - p odd-indexed slopes of 2p heads. Computed in
     float64 as posenc does, then rounded to float32 (posenc.alibi_slopes' dtype). */
  function powerOfTwoSlopes(n) {
    var start = Math.pow(2, -Math.pow(2, -(Math.log2(n) - 3)));
    var out = [];
    for (var h = 0; h < n; h++) out.push(start * Math.pow(start, h));
    return out;
  }

  function alibiSlopes(n) {
    var p = Math.pow(2, Math.floor(Math.log2(n)));
    var slopes = powerOfTwoSlopes(p);
    var extra = powerOfTwoSlopes(2 * p).filter(function (_, i) { return i % 2 === 0; });
    return slopes.concat(extra.slice(0, n - p)).map(f32);
  }

  // posenc.alibi_bias(n, L, causal=...)[h]: -m_h·(i - j), or -m_h·|i - j| (float32)
  function alibiBias(slope, length, causal) {
    var rows = [];
    for (var i = 0; i < length; i++) {
      var row = [];
      for (var j = 0; j < length; j++) {
        var distance = causal ? i - j : Math.abs(i - j);
        row.push(f32(-slope * distance));
      }
      rows.push(row);
    }
    return rows;
  }

  // ── formatting ───────────────────────────────────────────────────────────────────────────

  var SUPERSCRIPT = { "-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵",
    "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };

  function superscript(n) {
    return String(n).replace(/[-0-9]/g, function (c) { return SUPERSCRIPT[c]; });
  }

  function minus(text) {
    return text.replace(/^-/, "−");
  }

  // four significant digits; whole numbers of tokens from 10^4 to 10^6; a×10ⁿ outside
  function fmt(x, digits) {
    digits = digits || 4;
    if (!isFinite(x)) return x > 0 ? "∞" : x < 0 ? "−∞" : "–";
    if (x === 0) return "0";
    var a = Math.abs(x);
    if (a >= 1e6 || a < 1e-3) {
      var parts = x.toExponential(digits - 1).split("e");
      var mantissa = parts[0].replace(/\.?0+$/, "");
      return minus(mantissa) + "×10" + superscript(Number(parts[1]));
    }
    if (a >= 1e4) return minus(String(Math.round(x)));
    return minus(String(Number(x.toPrecision(digits))));
  }

  // a Python float literal, for the posenc call shown under each panel
  function py(x) {
    var text = String(x);
    return Number.isInteger(x) && !/e/.test(text) ? text + ".0" : text;
  }

  // ── controls ─────────────────────────────────────────────────────────────────────────────

  function powersOfTwo(lo, hi) {
    var out = [];
    for (var e = lo; e <= hi; e++) out.push(Math.pow(2, e));
    return out;
  }

  var BASES = [100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000,
    1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8];
  var FACTORS = [1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128];

  /* Each numeric parameter: a slider and a number box that stay in step. A slider either
     moves over [min, max] by step, or over a list of values (log-like scales); the number
     box takes any value in [lo, hi] (a multiple of `multiple` if given). */
  var PARAMS = {
    d: { min: 4, max: 256, step: 2, lo: 4, hi: 1024, multiple: 2 },
    base: { values: BASES, lo: 2, hi: 1e12 },
    context: { values: powersOfTwo(8, 20), lo: 1, hi: 1 << 30, multiple: 1 },
    factor: { values: FACTORS, lo: 1, hi: 1024 },
    original: { values: powersOfTwo(9, 18), lo: 16, hi: 1 << 24, multiple: 1 },
    seqLen: { values: powersOfTwo(9, 21), lo: 1, hi: 1 << 26, multiple: 1 },
    betaFast: { values: [1, 2, 4, 8, 16, 24, 32, 48, 64, 128], lo: 0.01, hi: 1e4 },
    betaSlow: { values: [0.125, 0.25, 0.5, 1, 2, 4, 8, 16], lo: 0.01, hi: 1e4 },
    lowFreqFactor: { values: [0.5, 1, 2, 3, 4], lo: 0.01, hi: 1e3 },
    highFreqFactor: { values: [1, 2, 4, 6, 8, 16, 32], lo: 0.01, hi: 1e3 },
    distance: { values: powersOfTwo(4, 20), lo: 4, hi: 1 << 22, multiple: 1 },
    seed: { min: 0, max: 99, step: 1, lo: 0, hi: 4294967295, multiple: 1 },
    heads: { min: 1, max: 64, step: 1, lo: 1, hi: 256, multiple: 1 },
    length: { min: 2, max: 24, step: 1, lo: 2, hi: 32, multiple: 1 },
    head: { min: 1, max: 64, step: 1, lo: 1, hi: 256, multiple: 1 },
  };

  function nearestIndex(values, x) {
    var best = 0;
    for (var i = 1; i < values.length; i++) {
      if (Math.abs(Math.log(values[i] / x)) < Math.abs(Math.log(values[best] / x))) best = i;
    }
    return best;
  }

  function valid(spec, x) {
    return (
      isFinite(x) && x >= spec.lo && x <= spec.hi &&
      (!spec.multiple || Math.abs(x / spec.multiple - Math.round(x / spec.multiple)) < 1e-9)
    );
  }

  /* Turn <div class="pe-control" data-param="name"><label>…</label></div> into a labelled
     slider and number box. `panel.state[name]` holds the value; `onChange` redraws. */
  function buildControl(panel, box, onChange) {
    var name = box.dataset.param;
    var spec = PARAMS[name];
    var label = box.querySelector("label");
    var id = "pe-" + panel.name + "-" + name;
    label.id = id + "-label";
    label.htmlFor = id;
    var slider = document.createElement("input");
    slider.type = "range";
    slider.id = id + "-slider";
    slider.setAttribute("aria-labelledby", label.id);
    if (spec.values) {
      slider.min = 0;
      slider.max = spec.values.length - 1;
      slider.step = 1;
    } else {
      slider.min = spec.min;
      slider.max = spec.max;
      slider.step = spec.step;
    }
    var number = document.createElement("input");
    number.type = "number";
    number.id = id;
    number.inputMode = spec.multiple ? "numeric" : "decimal";
    number.min = spec.lo;
    number.max = spec.hi;
    number.step = spec.multiple || "any";
    var row = document.createElement("div");
    row.className = "pe-inputs";
    row.appendChild(slider);
    row.appendChild(number);
    box.appendChild(row);

    function show(x, from) {
      if (from !== slider) {
        slider.value = spec.values ? nearestIndex(spec.values, x) : Math.min(Math.max(x, spec.min), spec.max);
      }
      slider.setAttribute("aria-valuetext", fmt(x, 6));
      if (from !== number) number.value = String(x);
      number.removeAttribute("aria-invalid");
    }

    var control = {
      name: name,
      box: box,
      set: function (x) { show(x); },
      limit: function (hi) { // the largest value allowed now (a head index: at most n)
        slider.max = Math.min(spec.max, hi);
        number.max = hi;
      },
    };
    slider.addEventListener("input", function () {
      var x = spec.values ? spec.values[Number(slider.value)] : Number(slider.value);
      show(x, slider);
      onChange(name, x);
    });
    number.addEventListener("input", function () {
      var x = Number(number.value);
      if (number.value.trim() === "" || !valid(spec, x)) {
        number.setAttribute("aria-invalid", "true");
        return;
      }
      show(x, number);
      onChange(name, x);
    });
    number.addEventListener("change", function () { show(panel.state[name]); });
    show(panel.state[name]);
    return control;
  }

  // ── charts ───────────────────────────────────────────────────────────────────────────────

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function text(parent, x, y, content, attrs) {
    var node = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    node.textContent = content;
    return node;
  }

  function niceTicks(lo, hi, count) {
    var span = hi - lo;
    if (span <= 0) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10(span / count)));
    var err = (count * step) / span;
    if (err <= 0.15) step *= 10;
    else if (err <= 0.35) step *= 5;
    else if (err <= 0.75) step *= 2;
    var ticks = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
      ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    return ticks;
  }

  // ticks of a log axis: powers of `radix` (thinned to at most ~7)
  function logTicks(lo, hi, radix) {
    var a = Math.ceil(Math.log(lo) / Math.log(radix) - 1e-9);
    var b = Math.floor(Math.log(hi) / Math.log(radix) + 1e-9);
    var every = Math.max(1, Math.ceil((b - a + 1) / 7));
    var ticks = [];
    for (var e = a; e <= b; e++) if ((e - a) % every === 0) ticks.push(e);
    return ticks;
  }

  function scale(axis, lo, hi) {
    if (axis.log) {
      var a = Math.log(axis.min), b = Math.log(axis.max);
      return function (v) { return lo + ((Math.log(v) - a) / (b - a)) * (hi - lo); };
    }
    return function (v) { return lo + ((v - axis.min) / (axis.max - axis.min)) * (hi - lo); };
  }

  function tickLabel(axis, value) {
    if (axis.log) {
      var radix = axis.radix || 10;
      if (radix === 2 && axis.plain) return fmt(Math.pow(2, value));
      return (radix === 2 ? "2" : "10") + superscript(value);
    }
    return fmt(value);
  }

  /* Draw into host (a .pe-plot element) at size {width, height}: the size of its CSS box,
     as the ResizeObserver last reported it. spec:
       x, y: {min, max, log, radix, plain, integer}
       series: [{points: [[x, y], ...], cls, dots}]
       bands: [{from, to, cls}] (x ranges), hlines: [{y, cls}], vlines: [{x, cls}]
       cells: heat map instead (see drawMatrix) */
  function drawChart(host, spec, size) {
    var width = Math.max(size.width, 240), height = Math.max(size.height, 180);
    var svg = el("svg", {
      viewBox: "0 0 " + width + " " + height, width: width, height: height,
      role: "img", "aria-labelledby": host.dataset.labelledby || "",
    });
    var compact = width < 420;
    var m = { left: compact ? 46 : 56, right: 12, top: 10, bottom: 40 };
    var x = scale(spec.x, m.left, width - m.right);
    var y = scale(spec.y, height - m.bottom, m.top);
    var plot = { left: m.left, right: width - m.right, top: m.top, bottom: height - m.bottom };
    var grid = el("g", { class: "pe-grid" }, svg);
    var axes = el("g", { class: "pe-axis" }, svg);

    function ticksOf(axis, count) {
      if (axis.log) {
        return logTicks(axis.min, axis.max, axis.radix || 10).map(function (e) {
          return { value: Math.pow(axis.radix || 10, e), label: tickLabel(axis, e) };
        });
      }
      return niceTicks(axis.min, axis.max, count)
        .filter(function (v) { return !axis.integer || Number.isInteger(v); })
        .map(function (v) { return { value: v, label: tickLabel(axis, v) }; });
    }
    ticksOf(spec.x, compact ? 4 : 7).forEach(function (t) {
      var px = x(t.value);
      el("line", { x1: px, x2: px, y1: plot.top, y2: plot.bottom }, grid);
      text(axes, px, plot.bottom + 16, t.label, { "text-anchor": "middle" });
    });
    ticksOf(spec.y, 5).forEach(function (t) {
      var py = y(t.value);
      el("line", { x1: plot.left, x2: plot.right, y1: py, y2: py }, grid);
      text(axes, plot.left - 6, py + 4, t.label, { "text-anchor": "end" });
    });
    el("rect", {
      x: plot.left, y: plot.top, width: plot.right - plot.left, height: plot.bottom - plot.top,
      class: "pe-frame",
    }, axes);
    text(axes, (plot.left + plot.right) / 2, height - 6, host.dataset.x || "", {
      "text-anchor": "middle", class: "pe-title",
    });
    var yTitle = text(axes, 0, 0, host.dataset.y || "", {
      "text-anchor": "middle", class: "pe-title",
      transform: "translate(12 " + (plot.top + plot.bottom) / 2 + ") rotate(-90)",
    });
    yTitle.setAttribute("dy", "0.3em");

    var clipId = host.id + "-clip";
    var clip = el("clipPath", { id: clipId }, el("defs", {}, svg));
    el("rect", { x: plot.left, y: plot.top - 4, width: plot.right - plot.left, height: plot.bottom - plot.top + 8 }, clip);
    var body = el("g", { "clip-path": "url(#" + clipId + ")" }, svg);
    (spec.bands || []).forEach(function (band) {
      var a = x(band.from), b = x(band.to);
      el("rect", { x: Math.min(a, b), y: plot.top, width: Math.abs(b - a), height: plot.bottom - plot.top, class: band.cls }, body);
    });
    (spec.hlines || []).forEach(function (line) {
      var py = y(line.y);
      el("line", { x1: plot.left, x2: plot.right, y1: py, y2: py, class: line.cls }, body);
    });
    (spec.vlines || []).forEach(function (line) {
      var px = x(line.x);
      el("line", { x1: px, x2: px, y1: plot.top, y2: plot.bottom, class: line.cls }, body);
    });
    (spec.series || []).forEach(function (series) {
      if (!series.points.length) return;
      if (series.dots) {
        var g = el("g", { class: series.cls }, body);
        var radius = series.points.length > 80 ? 2 : 3;
        series.points.forEach(function (p) {
          el(series.square ? "rect" : "circle", series.square
            ? { x: x(p[0]) - radius, y: y(p[1]) - radius, width: 2 * radius, height: 2 * radius }
            : { cx: x(p[0]), cy: y(p[1]), r: radius }, g);
        });
        if (!series.line) return;
      }
      var d = series.points.map(function (p, i) {
        return (i ? "L" : "M") + x(p[0]).toFixed(1) + " " + y(p[1]).toFixed(1);
      }).join("");
      el("path", { d: d, class: series.cls + " pe-line" }, body);
    });
    var hover = el("g", { class: "pe-hover", "aria-hidden": "true" }, svg);
    host.replaceChildren(svg);
    host.peHover = { x: x, y: y, plot: plot, series: spec.series || [], layer: hover, svg: svg };
    if (!host.dataset.hover) {
      host.dataset.hover = "true";
      host.addEventListener("pointermove", function (event) { showValue(host, event); });
      host.addEventListener("pointerleave", function () { host.peHover.layer.replaceChildren(); });
    }
  }

  /* Under the pointer: the nearest point of the chart (by x), its value in every series that
     has a point there, and a guide line. The tables hold the same numbers for the keyboard. */
  function showValue(host, event) {
    var h = host.peHover;
    if (!h) return;
    var box = h.svg.getBoundingClientRect();
    var px = event.clientX - box.left;
    var best = null;
    h.series.forEach(function (series) {
      series.points.forEach(function (p) {
        var distance = Math.abs(h.x(p[0]) - px);
        if (!best || distance < best.distance) best = { distance: distance, at: p[0] };
      });
    });
    h.layer.replaceChildren();
    if (!best || px < h.plot.left - 8 || px > h.plot.right + 8) return;
    var gx = h.x(best.at);
    el("line", { x1: gx, x2: gx, y1: h.plot.top, y2: h.plot.bottom, class: "pe-guide" }, h.layer);
    var label = text(h.layer, 0, h.plot.top + 14, "", { class: "pe-readout-text" });
    var head = document.createElementNS(SVG, "tspan");
    head.textContent = fmt(best.at) + ":";
    label.appendChild(head);
    h.series.forEach(function (series) {
      series.points.forEach(function (p) {
        if (p[0] !== best.at) return;
        el("circle", { cx: gx, cy: h.y(p[1]), r: 4.5, class: series.cls + " pe-mark" }, h.layer);
        var value = document.createElementNS(SVG, "tspan");
        value.setAttribute("class", series.cls);
        value.textContent = " " + fmt(p[1]);
        label.appendChild(value);
      });
    });
    // place the label inside the plot, on the side away from the pointer
    var right = gx < (h.plot.left + h.plot.right) / 2;
    label.setAttribute("x", right ? h.plot.right - 6 : h.plot.left + 6);
    label.setAttribute("text-anchor", right ? "end" : "start");
  }

  /* The bias of one ALiBi head as a grid of cells: colour = size of the penalty; masked cells
     (a causal mask removes keys after the query) hatched; numbers written when they fit. */
  function drawMatrix(host, rows, causal, maxAbs, size) {
    var width = Math.max(size.width, 200);
    var n = rows.length;
    var labelRoom = 22;
    var cell = Math.max(4, Math.min(48, Math.floor((width - labelRoom - 4) / n)));
    var size = labelRoom + cell * n + 4;
    var svg = el("svg", {
      viewBox: "0 0 " + size + " " + size, width: size, height: size,
      role: "img", "aria-labelledby": host.dataset.labelledby || "",
    });
    var pattern = el("pattern", {
      id: host.id + "-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
      patternTransform: "rotate(45)",
    }, el("defs", {}, svg));
    el("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "pe-hatch" }, pattern);
    var labels = el("g", { class: "pe-axis" }, svg);
    var showNumbers = cell >= 30;
    for (var i = 0; i < n; i++) {
      if (n <= 16 || i % 2 === 0) {
        text(labels, labelRoom + cell * i + cell / 2, 14, String(i), { "text-anchor": "middle" });
        text(labels, labelRoom - 4, labelRoom + cell * i + cell / 2 + 4, String(i), { "text-anchor": "end" });
      }
    }
    var g = el("g", { class: "pe-cells" }, svg);
    for (var r = 0; r < n; r++) {
      for (var c = 0; c < n; c++) {
        var value = rows[r][c];
        var masked = causal && c > r;
        var share = maxAbs > 0 ? Math.abs(value) / maxAbs : 0;
        var px = labelRoom + cell * c, py = labelRoom + cell * r;
        var rect = el("rect", { x: px, y: py, width: cell, height: cell }, g);
        if (masked) {
          rect.setAttribute("class", "pe-masked");
          rect.setAttribute("fill", "url(#" + host.id + "-hatch)");
        } else {
          rect.setAttribute("class", "pe-cell");
          rect.setAttribute("fill-opacity", (0.08 + 0.8 * share).toFixed(3));
        }
        if (showNumbers && !masked) {
          text(g, px + cell / 2, py + cell / 2 + 4, fmt(value, 2), {
            "text-anchor": "middle", class: share > 0.55 ? "pe-on-dark" : "pe-on-light",
          });
        }
      }
    }
    host.replaceChildren(svg);
  }

  // ── panels ───────────────────────────────────────────────────────────────────────────────

  function out(panel, name, value) {
    panel.root.querySelectorAll('[data-out="' + name + '"]').forEach(function (node) {
      node.textContent = value;
    });
  }

  // fill a table's body: rows of cells {text, value}; `value` goes into data-value
  function fillTable(panel, name, rows) {
    var body = panel.root.querySelector('table[data-table="' + name + '"] tbody');
    if (!body) return;
    var fragment = document.createDocumentFragment();
    rows.forEach(function (cells) {
      var tr = document.createElement("tr");
      cells.forEach(function (cell, i) {
        var td = document.createElement(i === 0 ? "th" : "td");
        if (i === 0) td.scope = "row";
        if (typeof cell === "object" && cell !== null) {
          td.textContent = cell.text;
          if (cell.value !== undefined) td.dataset.value = String(cell.value);
          if (cell.masked) td.dataset.masked = "true";
        } else {
          td.textContent = String(cell);
        }
        tr.appendChild(td);
      });
      fragment.appendChild(tr);
    });
    body.replaceChildren(fragment);
  }

  function num(value, digits) {
    return { text: fmt(value, digits), value: value };
  }

  var PANELS = {};

  PANELS.frequencies = {
    state: { d: 64, base: 10000, context: 4096 },
    compute: function (s) {
      var inv = defaultInvFreq(s.d, s.base);
      var periods = Array.from(inv, function (t) { return TWO_PI / t; });
      return { inv: inv, periods: periods };
    },
    render: function (panel, s, data) {
      var half = s.d / 2;
      var turning = data.periods.filter(function (p) { return p <= s.context; }).length;
      out(panel, "pairs", String(half));
      out(panel, "last", String(half - 1));
      out(panel, "fastest", fmt(data.periods[0]));
      out(panel, "slowest", fmt(data.periods[half - 1]));
      out(panel, "slowest-theta", fmt(data.inv[half - 1]));
      out(panel, "ratio", fmt(Math.pow(s.base, -2 / s.d)));
      out(panel, "turning", String(turning));
      out(panel, "still", String(half - turning));
      out(panel, "python", "posenc.rope_inv_freq(" + s.d + ", base=" + py(s.base) + ")[0]");
      fillTable(panel, "frequencies", Array.from(data.inv, function (t, i) {
        return [i, num(t, 6), num(data.periods[i], 6), num(s.context / data.periods[i], 4)];
      }));
      panel.charts.periods = function (host, size) {
        var lo = Math.min(data.periods[0], s.context) / 1.6;
        var hi = Math.max(data.periods[half - 1], s.context) * 1.6;
        drawChart(host, {
          x: { min: -0.5, max: half - 0.5, integer: true },
          y: { min: lo, max: hi, log: true },
          hlines: [{ y: s.context, cls: "pe-ref pe-s2" }],
          series: [{
            points: Array.from(data.periods, function (p, i) { return [i, p]; }),
            cls: "pe-s1", dots: true,
          }],
        }, size);
      };
    },
  };

  var METHOD_PARAMS = {
    linear: ["factor"],
    ntk: ["factor"],
    dynamic: ["factor", "original", "seqLen"],
    yarn: ["factor", "original", "betaFast", "betaSlow", "truncate"],
    llama3: ["factor", "original", "lowFreqFactor", "highFreqFactor"],
  };

  function pythonScaling(s) {
    var m = s.method;
    if (m === "ntk") {
      return "posenc.rope_inv_freq(" + s.d + ", base=" + py(s.base) + " * " + py(s.factor) +
        " ** (" + s.d + " / " + (s.d - 2) + "))";
    }
    var parts = ['"rope_type": "' + m + '"', '"factor": ' + py(s.factor)];
    if (m !== "linear") parts.push('"original_max_position_embeddings": ' + s.original);
    if (m === "yarn") {
      parts.push('"beta_fast": ' + py(s.betaFast), '"beta_slow": ' + py(s.betaSlow));
      if (!s.truncate) parts.push('"truncate": False');
    }
    if (m === "llama3") {
      parts.push('"low_freq_factor": ' + py(s.lowFreqFactor),
        '"high_freq_factor": ' + py(s.highFreqFactor));
    }
    return "posenc.rope_inv_freq(" + s.d + ", base=" + py(s.base) + ", scaling={" +
      parts.join(", ") + "}" + (m === "dynamic" ? ", seq_len=" + s.seqLen : "") + ")";
  }

  PANELS.scaling = {
    state: {
      method: "yarn", d: 128, base: 10000, factor: 8, original: 4096, seqLen: 16384,
      betaFast: 32, betaSlow: 1, truncate: true, lowFreqFactor: 1, highFreqFactor: 4,
    },
    compute: function (s) {
      var plain = defaultInvFreq(s.d, s.base);
      if (s.method === "llama3" && !(s.highFreqFactor > s.lowFreqFactor)) return { error: "order" };
      var scaled = ropeInvFreq(s.d, s.base, s);
      return { plain: plain, scaled: scaled };
    },
    render: function (panel, s, data) {
      var wanted = METHOD_PARAMS[s.method];
      panel.root.querySelectorAll(".pe-control[data-param], .pe-choice[data-param]").forEach(function (box) {
        var name = box.dataset.param;
        if (name === "d" || name === "base") return;
        box.hidden = wanted.indexOf(name) < 0;
      });
      panel.root.querySelectorAll("[data-method]").forEach(function (node) {
        node.hidden = node.dataset.method.split(" ").indexOf(s.method) < 0;
      });
      var error = panel.root.querySelector("[data-error]");
      if (error) error.hidden = !data.error;
      if (data.error) return;
      var scaled = data.scaled, plain = data.plain, half = s.d / 2;
      var ratios = Array.from(scaled.inv, function (t, i) { return t / plain[i]; });
      var kept = 0, interpolated = 0;
      ratios.forEach(function (r) {
        if (Math.abs(r - 1) <= 1e-6) kept++;
        else if (Math.abs(r * s.factor - 1) <= 1e-6) interpolated++;
      });
      out(panel, "kept", String(kept));
      out(panel, "interpolated", String(interpolated));
      out(panel, "between", String(half - kept - interpolated));
      out(panel, "attention", fmt(scaled.factor, 6));
      out(panel, "new-base", fmt(scaled.base, 6));
      out(panel, "length-used", String(Math.max(s.seqLen, s.original)));
      out(panel, "ramp-low", scaled.ramp ? fmt(scaled.ramp.low) : "–");
      out(panel, "ramp-high", scaled.ramp ? fmt(scaled.ramp.high) : "–");
      out(panel, "wavelen-kept", scaled.bands ? fmt(scaled.bands.kept) : "–");
      out(panel, "wavelen-interpolated", scaled.bands ? fmt(scaled.bands.interpolated) : "–");
      out(panel, "python", pythonScaling(s));
      panel.root.dataset.attentionFactor = String(scaled.factor);
      fillTable(panel, "scaling", Array.from(scaled.inv, function (t, i) {
        return [
          i, num(plain[i], 6), num(t, 6), num(ratios[i], 6), num(TWO_PI / t, 6),
          scaled.gamma ? num(scaled.gamma[i], 6) : { text: "–" },
        ];
      }));
      var lo = Math.min(1 / s.factor, Math.min.apply(null, ratios));
      var hi = Math.max(1, Math.max.apply(null, ratios));
      if (hi / lo < 2) lo = hi / 2;
      var bands = [];
      if (scaled.ramp) {
        bands.push({ from: scaled.ramp.low, to: Math.min(scaled.ramp.high, half - 0.5), cls: "pe-band" });
      }
      if (scaled.gamma && s.method === "llama3") {
        var medium = [];
        scaled.gamma.forEach(function (g, i) { if (g > 0 && g < 1) medium.push(i); });
        if (medium.length) bands.push({ from: medium[0] - 0.5, to: medium[medium.length - 1] + 0.5, cls: "pe-band" });
      }
      panel.charts.ratio = function (host, size) {
        drawChart(host, {
          x: { min: -0.5, max: half - 0.5, integer: true },
          y: { min: lo / 1.15, max: hi * 1.15, log: true, radix: 2, plain: true },
          bands: bands,
          hlines: [{ y: 1, cls: "pe-ref" }, { y: 1 / s.factor, cls: "pe-ref pe-s2" }],
          series: [{
            points: ratios.map(function (r, i) { return [i, r]; }), cls: "pe-s1", dots: true,
            line: true,
          }],
        }, size);
      };
      panel.charts.ramp = function (host, size) {
        if (!scaled.gamma) return;
        var series = [{
          points: Array.from(scaled.gamma, function (g, i) { return [i, g]; }),
          cls: "pe-s3", dots: true, line: true,
        }];
        var vlines = [];
        if (scaled.ramp) {
          vlines.push({ x: scaled.ramp.low, cls: "pe-ref" }, { x: scaled.ramp.high, cls: "pe-ref" });
        }
        drawChart(host, {
          x: { min: -0.5, max: half - 0.5, integer: true },
          y: { min: -0.05, max: 1.05 },
          bands: bands,
          vlines: vlines,
          series: series,
        }, size);
      };
    },
  };

  function sampledDistances(maxDistance, count) {
    var seen = new Set([0, 1]);
    var out = [0, 1];
    for (var i = 0; i <= count; i++) {
      var r = Math.round(Math.exp((Math.log(maxDistance) * i) / count));
      if (!seen.has(r)) { seen.add(r); out.push(r); }
    }
    return out.sort(function (a, b) { return a - b; });
  }

  PANELS.distance = {
    state: { d: 64, base: 10000, distance: 16384, seed: 0, random: "independent" },
    compute: function (s) {
      var inv = defaultInvFreq(s.d, s.base);
      var draws = normals(s.seed, 2 * s.d);
      var q = draws.slice(0, s.d);
      var k = s.random === "same" ? q : draws.slice(s.d);
      var distances = sampledDistances(s.distance, 600);
      var aligned = distances.map(function (r) { return alignedScore(inv, r); });
      var random = s.random === "none" ? null : distances.map(function (r) { return rotatedScore(inv, q, k, r); });
      return { inv: inv, q: q, k: k, distances: distances, aligned: aligned, random: random };
    },
    render: function (panel, s, data) {
      var table = [0];
      for (var r = 1; r <= s.distance; r *= 2) table.push(r);
      if (table[table.length - 1] !== s.distance) table.push(s.distance);
      fillTable(panel, "distance", table.map(function (r) {
        return [r, num(alignedScore(data.inv, r), 6),
          data.random ? num(rotatedScore(data.inv, data.q, data.k, r), 6) : { text: "–" }];
      }));
      var last = data.aligned.length - 1;
      var tail = data.aligned.filter(function (_, i) { return data.distances[i] >= s.distance / 2; });
      out(panel, "aligned-end", fmt(data.aligned[last]));
      out(panel, "aligned-max-tail", fmt(Math.max.apply(null, tail.map(Math.abs))));
      out(panel, "python", "posenc.rotary_cos_sin(torch.arange(" + (s.distance + 1) +
        "), posenc.rope_inv_freq(" + s.d + ", base=" + py(s.base) + ")[0])[0].mean(-1)");
      var vectors = panel.root.querySelector("[data-vectors]");
      vectors.dataset.q = JSON.stringify(Array.from(data.q));
      vectors.dataset.k = JSON.stringify(Array.from(data.k));
      var lo = Math.min.apply(null, data.aligned.concat(data.random || []));
      var hi = Math.max.apply(null, data.aligned.concat(data.random || []));
      panel.charts.score = function (host, size) {
        var points = function (values) {
          return values.map(function (v, i) { return [data.distances[i], v]; })
            .filter(function (p) { return p[0] >= 1; });
        };
        var series = [{ points: points(data.aligned), cls: "pe-s1" }];
        if (data.random) series.push({ points: points(data.random), cls: "pe-s2" });
        drawChart(host, {
          x: { min: 1, max: s.distance, log: true, radix: 2, plain: true },
          y: { min: Math.min(lo, -0.2) - 0.05, max: Math.max(hi, 1) + 0.05 },
          hlines: [{ y: 0, cls: "pe-ref" }],
          series: series,
        }, size);
      };
    },
  };

  PANELS.alibi = {
    state: { heads: 12, length: 8, head: 1, causal: true },
    compute: function (s) {
      var slopes = alibiSlopes(s.heads);
      var head = Math.min(s.head, s.heads);
      return { slopes: slopes, head: head, bias: alibiBias(slopes[head - 1], s.length, s.causal) };
    },
    render: function (panel, s, data) {
      var p = Math.pow(2, Math.floor(Math.log2(s.heads)));
      var headControl = panel.controls.head;
      if (headControl) {
        headControl.limit(s.heads);
        if (s.head > s.heads) {
          panel.state.head = s.heads;
          headControl.set(s.heads);
        }
      }
      out(panel, "power", String(p));
      out(panel, "extra", String(s.heads - p));
      out(panel, "first", fmt(data.slopes[0], 6));
      out(panel, "last", fmt(data.slopes[p - 1], 6));
      out(panel, "head-shown", String(data.head));
      out(panel, "slope-shown", fmt(data.slopes[data.head - 1], 6));
      out(panel, "python", "posenc.alibi_slopes(" + s.heads + "), posenc.alibi_bias(" + s.heads +
        ", " + s.length + ", causal=" + (s.causal ? "True" : "False") + ")[" + (data.head - 1) + "]");
      var groupFirst = panel.root.dataset.groupFirst || "1";
      var groupExtra = panel.root.dataset.groupExtra || "2";
      fillTable(panel, "slopes", data.slopes.map(function (m, i) {
        return [i + 1, num(m, 6), num(Math.log2(m), 4), i < p ? groupFirst : groupExtra];
      }));
      fillTable(panel, "bias", data.bias.map(function (row, i) {
        return [i].concat(row.map(function (v, j) {
          var masked = s.causal && j > i;
          return masked ? { text: "−∞", value: v, masked: true } : num(v, 4);
        }));
      }));
      var head = panel.root.querySelector('table[data-table="bias"] thead tr');
      if (head) {
        var cells = [head.firstElementChild];
        for (var j = 0; j < s.length; j++) {
          var th = document.createElement("th");
          th.scope = "col";
          th.textContent = String(j);
          cells.push(th);
        }
        head.replaceChildren.apply(head, cells);
      }
      panel.charts.slopes = function (host, size) {
        var firstPoints = [], extraPoints = [];
        data.slopes.forEach(function (m, i) { (i < p ? firstPoints : extraPoints).push([i + 1, m]); });
        drawChart(host, {
          x: { min: 0.5, max: s.heads + 0.5, integer: true },
          y: { min: Math.min.apply(null, data.slopes) / 1.5, max: 1, log: true, radix: 2 },
          series: [
            { points: firstPoints, cls: "pe-s1", dots: true },
            { points: extraPoints, cls: "pe-s2", dots: true, square: true },
          ],
        }, size);
      };
      var maxAbs = 0;
      data.bias.forEach(function (row, i) {
        row.forEach(function (v, j) { if (!(s.causal && j > i)) maxAbs = Math.max(maxAbs, Math.abs(v)); });
      });
      panel.charts.bias = function (host, size) { drawMatrix(host, data.bias, s.causal, maxAbs, size); };
    },
  };

  // ── wiring ───────────────────────────────────────────────────────────────────────────────

  /* One panel: its controls, its state, and a redraw that computes, fills the read-outs and
     tables, and draws the charts. Charts are drawn at the size the ResizeObserver reported
     (it reports once after the first layout, and on every change of width), so drawing never
     forces a layout of the page. */
  function setUp(root) {
    var name = root.dataset.panel;
    var definition = PANELS[name];
    if (!definition || root.dataset.ready) return;
    root.dataset.ready = "true";
    var panel = {
      name: name, root: root, state: Object.assign({}, definition.state), controls: {},
      charts: {}, hosts: {}, sizes: {}, pending: false,
    };

    function draw(chart) {
      var size = panel.sizes[chart];
      if (!(panel.charts[chart] && size && size.width > 0)) return;
      panel.charts[chart](panel.hosts[chart], size);
      panel.hosts[chart].dataset.drawnWidth = size.width;  // what it was drawn for (tests)
    }

    function redraw() {
      panel.pending = false;
      var data = definition.compute(panel.state);
      panel.charts = {};
      definition.render(panel, panel.state, data);
      Object.keys(panel.hosts).forEach(draw);
      root.dataset.params = JSON.stringify(panel.state);
      delete root.dataset.pending;
    }

    /* data-pending marks a redraw that is asked for and not yet done: until it is gone, the
       numbers and charts on the page may still be those of the values before (a reader's
       script or a test waits for it, not for a time) */
    function schedule() {
      if (panel.pending) return;
      panel.pending = true;
      root.dataset.pending = "true";
      requestAnimationFrame(redraw);
    }

    function onChange(param, value) {
      panel.state[param] = value;
      schedule();
    }

    root.querySelectorAll(".pe-control[data-param]").forEach(function (box) {
      panel.controls[box.dataset.param] = buildControl(panel, box, onChange);
    });
    // selects and check boxes are written in the page (their options are words)
    root.querySelectorAll("select[data-param]").forEach(function (select) {
      select.value = panel.state[select.dataset.param];
      select.addEventListener("change", function () { onChange(select.dataset.param, select.value); });
    });
    root.querySelectorAll('input[type="checkbox"][data-param]').forEach(function (box) {
      box.checked = Boolean(panel.state[box.dataset.param]);
      box.addEventListener("change", function () { onChange(box.dataset.param, box.checked); });
    });
    root.querySelectorAll(".pe-plot[data-chart]").forEach(function (host) {
      host.id = host.id || "pe-" + name + "-" + host.dataset.chart;
      panel.hosts[host.dataset.chart] = host;
    });
    redraw();
    // kept on the panel (which the controls' listeners keep): an observer nothing refers to
    // may be collected before it reports
    var observer = panel.observer = new ResizeObserver(function (entries) {
      entries.forEach(function (entry) {
        var chart = entry.target.dataset.chart;
        var width = Math.round(entry.contentRect.width);
        var height = Math.round(entry.contentRect.height);
        var before = panel.sizes[chart];
        panel.sizes[chart] = { width: width, height: height };
        // a drawing that changes only the box's height (the bias matrix) is not redrawn
        if (!before || before.width !== width) draw(chart);
      });
    });
    Object.keys(panel.hosts).forEach(function (chart) { observer.observe(panel.hosts[chart]); });
  }

  /* Panels waiting to be set up, one per task: setting up two or three panels in one go
     kept a slow phone's main thread busy for a quarter of a second while the page loaded
     (Lighthouse's total blocking time); one at a time, a tap or a scroll in between is
     answered at once. */
  var queue = [];
  function setUpNext() {
    var root = queue.shift();
    if (root) setUp(root);
    if (queue.length) setTimeout(setUpNext);
  }
  function enqueue(root) {
    queue.push(root);
    if (queue.length === 1) setTimeout(setUpNext);
  }

  /* Set up each panel when it comes within a screen's height of the viewport: a reader who
     opens the page sees the first panel at once, and the others are ready before they
     scroll into view (their boxes have their final size already, so nothing moves). */
  function init() {
    var roots = document.querySelectorAll(".pe-panel[data-panel]:not([data-ready])");
    if (!roots.length) return;
    if (typeof IntersectionObserver === "undefined") {
      roots.forEach(enqueue);
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        enqueue(entry.target);
      });
    }, { rootMargin: "100% 0px" });
    roots.forEach(function (root) { observer.observe(root); });
  }

  window.posencExplorer = {
    init: init,
    // the formulas, for a reader's console and the tests
    math: {
      defaultInvFreq: defaultInvFreq, ropeInvFreq: ropeInvFreq, alignedScore: alignedScore,
      rotatedScore: rotatedScore, normals: normals, alibiSlopes: alibiSlopes, alibiBias: alibiBias,
    },
  };
  init();
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(init);
  }
})();
