/* posenc explorer (docs/explorer.md, docs/explorer.zh.md).

   Five panels, each computed in the browser and drawn as inline SVG:
     frequencies  RoPE frequencies θ_i and periods 2π/θ_i for a head size and base
     scaling      what PI, NTK-aware, dynamic NTK, YaRN and Llama 3 scaling do to each pair
     distance     the attention score against distance (aligned pairs, seeded random q and k)
     alibi        ALiBi slopes (Press et al.'s rule, any head count) and one head's bias matrix
     model        every layer of a released or pasted config.json, as posenc.describe reads it

   The numbers follow posenc's source (src/posenc/rope_scaling.py, rope.py, alibi.py,
   describe.py) step by step, rounding every float32 operation with Math.fround, so the page
   agrees with the library to float32 precision; tests/browser/test_explorer.py (and
   test_explorer_model.py for the model panel) sets the controls and compares.

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

  // ── your model: posenc.describe in the browser ───────────────────────────────────────────

  /* The "your model" panel reads a config.json the way src/posenc/describe.py does (itself
     transformers 5.23's reading), with the parts of rope_scaling.py, layer_types.py,
     rope_axes.py and alibi.py it calls. Each function names the Python function it mirrors;
     only what describe needs is here. A config it cannot read raises posenc's message (the
     field named as posenc names it), so the page and the library refuse the same files.
     A JSON number cannot say whether it was written 4096 or 4096.0: where posenc refuses a
     float for an int field, the page takes an integral one. */

  function configError(message) {
    var error = new Error(message);
    error.posencConfig = true;  // a config the page cannot read (anything else is a bug)
    return error;
  }

  function has(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  // config.get(key) in Python: undefined and null both read as None
  function get(object, key) {
    return has(object, key) && object[key] !== null ? object[key] : undefined;
  }

  function isDict(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  function isNumber(value) {
    return typeof value === "number";
  }

  function isInt(value) {
    return typeof value === "number" && Number.isInteger(value);
  }

  // Python's truthiness (`if not value`): [] and {} are false too
  function truthy(value) {
    if (Array.isArray(value)) return value.length > 0;
    if (isDict(value)) return Object.keys(value).length > 0;
    return Boolean(value);
  }

  // repr() and type().__name__ of a JSON value, as posenc's messages show them (_checks._given)
  function pyRepr(value) {
    if (value === null || value === undefined) return "None";
    if (value === true) return "True";
    if (value === false) return "False";
    if (typeof value === "number") return String(value);
    if (typeof value === "string") return "'" + value.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'";
    if (Array.isArray(value)) return "[" + value.map(pyRepr).join(", ") + "]";
    return "{" + Object.keys(value).map(function (k) { return pyRepr(k) + ": " + pyRepr(value[k]); }).join(", ") + "}";
  }

  function pyType(value) {
    if (value === null || value === undefined) return "NoneType";
    if (typeof value === "boolean") return "bool";
    if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
    if (typeof value === "string") return "str";
    return Array.isArray(value) ? "list" : "dict";
  }

  function given(value) {
    return pyType(value) + " " + pyRepr(value);
  }

  // _checks.check_int
  function checkInt(name, value, minimum) {
    if (!isInt(value)) throw configError(name + " must be an int >= " + minimum + ", got " + given(value));
    if (value < minimum) throw configError(name + " must be an int >= " + minimum + ", got " + pyRepr(value));
    return value;
  }

  // _checks.check_even
  function checkEven(name, value) {
    if (!isInt(value)) throw configError(name + " must be a positive even int, got " + given(value));
    if (value < 1 || value % 2) throw configError(name + " must be a positive even int, got " + pyRepr(value));
    return value;
  }

  // _checks.check_number (bounds: {above, atLeast, atMost})
  function checkNumber(name, value, bounds) {
    var allowed = [];
    if (bounds.above !== undefined) allowed.push("> " + bounds.above);
    if (bounds.atLeast !== undefined) allowed.push(">= " + bounds.atLeast);
    if (bounds.atMost !== undefined) allowed.push("<= " + bounds.atMost);
    var wanted = ("a finite number " + allowed.join(" and ")).trim();
    if (!isNumber(value)) throw configError(name + " must be " + wanted + ", got " + given(value));
    if (!isFinite(value) || (bounds.above !== undefined && !(value > bounds.above)) ||
        (bounds.atLeast !== undefined && !(value >= bounds.atLeast)) ||
        (bounds.atMost !== undefined && !(value <= bounds.atMost))) {
      throw configError(name + " must be " + wanted + ", got " + pyRepr(value));
    }
    return value;
  }

  // _checks.check_numbers
  function checkNumbers(name, value) {
    if (!Array.isArray(value)) throw configError(name + " must be a list of finite numbers > 0, got " + given(value));
    return value.map(function (v, i) { return checkNumber(name + "[" + i + "]", v, { above: 0 }); });
  }

  // _checks.check_ints (with length)
  function checkInts(name, value, length) {
    if (!Array.isArray(value)) throw configError(name + " must be a list of ints >= 1, got " + given(value));
    if (value.length !== length) {
      throw configError(name + " must have " + length + " entries, got " + value.length + ": " + pyRepr(value));
    }
    return value.map(function (v, i) { return checkInt(name + "[" + i + "]", v, 1); });
  }

  // describe._field, _int_field, _number_field, _head_dim
  function field(config, names, fallback) {
    for (var i = 0; i < names.length; i++) {
      if (get(config, names[i]) !== undefined) return config[names[i]];
    }
    return fallback;
  }

  function intField(config, names, fallback) {
    var value = field(config, names, fallback);
    if (value === undefined || value === null) {
      throw configError("config['" + names[0] + "'] must be given for this model, got none");
    }
    return checkInt("config['" + names[0] + "']", value, 1);
  }

  function numberField(config, name, fallback) {
    var value = get(config, name);
    if (value === undefined) return fallback;
    if (!isNumber(value)) throw configError("config['" + name + "'] must be a number, got " + given(value));
    return value;
  }

  function headDimOf(config) {
    var heads = intField(config, ["num_attention_heads"]);
    var explicit = get(config, "head_dim");
    if (explicit !== undefined) return checkInt("config['head_dim']", explicit, 1);
    var hidden = intField(config, ["hidden_size"]);
    if (hidden % heads) {
      throw configError("config['hidden_size'] must be a multiple of num_attention_heads (" + heads +
        ") when head_dim is not given, got " + hidden);
    }
    return hidden / heads;
  }

  // ── the scaling dict: rope_scaling.RopeScaling.from_dict and the variants' prepare ──

  function invFreqBase(dim, base) {  // rope_scaling._inv_freq: ceil(dim/2) of base^(-2i/dim)
    var b = f32(base), out = new Float64Array(Math.ceil(dim / 2));
    for (var i = 0; i < out.length; i++) out[i] = f32(1 / f32(Math.pow(b, f32((2 * i) / dim))));
    return out;
  }

  function missing(ropeType, key, how) {
    return configError("scaling['" + key + "'] must be given for rope_type '" + ropeType + "'" + (how || "") + ", got none");
  }

  function trainedLength(spec, maxPositions) {  // rope_scaling._trained_length
    var original = spec.original_max_position_embeddings || maxPositions;
    if (original === undefined || original === null) {
      throw missing(spec.rope_type, "original_max_position_embeddings",
        " (or pass max_position_embeddings=, which transformers falls back to)");
    }
    return original;
  }

  function derivedFactor(spec, maxPositions) {  // rope_scaling._derived_factor
    if (spec.factor !== undefined) return spec.factor;
    if (maxPositions === undefined || maxPositions === null) {
      throw missing(spec.rope_type, "factor", " (or pass max_position_embeddings=: transformers then uses " +
        "max_position_embeddings / original_max_position_embeddings)");
    }
    return maxPositions / spec.original_max_position_embeddings;
  }

  var KEY_CHECKS = {  // rope_scaling._KEY_CHECKS
    factor: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    original_max_position_embeddings: function (n, v) { return checkInt(n, v, 1); },
    partial_rotary_factor: function (n, v) { return checkNumber(n, v, { above: 0, atMost: 1 }); },
    rope_theta: function (n, v) { return checkNumber(n, v, { above: 1 }); },
    attention_factor: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    beta_fast: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    beta_slow: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    mscale: function (n, v) { return checkNumber(n, v, { atLeast: 0 }); },
    mscale_all_dim: function (n, v) { return checkNumber(n, v, { atLeast: 0 }); },
    truncate: function (n, v) {
      if (typeof v !== "boolean") throw configError(n + " must be True or False, got " + given(v));
      return v;
    },
    low_freq_factor: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    high_freq_factor: function (n, v) { return checkNumber(n, v, { above: 0 }); },
    short_factor: checkNumbers,
    long_factor: checkNumbers,
  };
  var COMMON_KEYS = ["rope_theta", "partial_rotary_factor", "max_position_embeddings"];

  /* rope_scaling.ROPE_SCALING: each variant's keys, prepare(spec, max_positions), and
     inv(dim, base, spec, seqLen) -> {inv, factor, gamma (share of each pair kept: YaRN's
     1 - ramp, Llama 3's smooth blend), ramp ({low, high}: YaRN's ends)} */
  var VARIANTS = {
    "default": { keys: [], oddWidth: true, inv: function (dim, base) {  // _default
      return { inv: invFreqBase(dim, base), factor: 1 };
    } },
    linear: { keys: ["factor"], oddWidth: true,
      prepare: function (spec) {  // _prepare_linear
        if (spec.factor === undefined) throw missing("linear", "factor");
        return spec;
      },
      inv: function (dim, base, spec) {  // _linear
        var s = f32(spec.factor);
        return { inv: invFreqBase(dim, base).map(function (t) { return f32(t / s); }), factor: 1 };
      } },
    dynamic: { keys: ["factor", "original_max_position_embeddings"], oddWidth: true, lengthDependent: true,
      prepare: function (spec, maxPositions) {  // _prepare_dynamic
        if (spec.factor === undefined) throw missing("dynamic", "factor");
        var original = spec.original_max_position_embeddings;
        if (original === undefined && (maxPositions === undefined || maxPositions === null)) {
          throw configError("max_position_embeddings must be given for rope_type 'dynamic' (transformers reads " +
            "the trained length from config.max_position_embeddings; posenc also takes it as " +
            "scaling['original_max_position_embeddings']), got none");
        }
        if (original !== undefined && maxPositions !== undefined && maxPositions !== null && original !== maxPositions) {
          throw configError("max_position_embeddings must equal scaling['original_max_position_embeddings'] (" +
            original + ") for rope_type 'dynamic' (both are the trained length), got " + maxPositions);
        }
        spec.original_max_position_embeddings = original || maxPositions;
        return spec;
      },
      inv: function (dim, base, spec, seqLen) {  // _dynamic, seq_len an int
        var s = spec.factor, original = spec.original_max_position_embeddings;
        if (dim <= 2) throw configError("head_dim must give more than 2 rotated channels for 'dynamic', got " + dim);
        var length = seqLen === undefined ? original : Math.max(seqLen, original);
        var scaledBase = base * Math.pow((s * length / original) - (s - 1), dim / (dim - 2));
        return { inv: invFreqBase(dim, scaledBase), factor: 1 };
      } },
    yarn: { keys: ["factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
      "mscale", "mscale_all_dim", "truncate"],
      prepare: function (spec, maxPositions) {  // _prepare_yarn
        spec.original_max_position_embeddings = trainedLength(spec, maxPositions);
        spec.factor = derivedFactor(spec, maxPositions);
        if ((spec.beta_fast || 32) < (spec.beta_slow || 1)) {
          throw configError("scaling['beta_fast'] must be >= scaling['beta_slow'] (" + (spec.beta_slow || 1) +
            ") (the fast boundary turns more often), got " + (spec.beta_fast || 32));
        }
        return spec;
      },
      inv: function (dim, base, spec) {  // _yarn
        var s = spec.factor, original = spec.original_max_position_embeddings;
        var factor = spec.attention_factor;
        if (factor === undefined) {
          factor = spec.mscale && spec.mscale_all_dim
            ? yarnMscale(s, spec.mscale) / yarnMscale(s, spec.mscale_all_dim) : yarnMscale(s);
        }
        var low = yarnCorrectionDim(spec.beta_fast || 32, dim, base, original);
        var high = yarnCorrectionDim(spec.beta_slow || 1, dim, base, original);
        if (spec.truncate !== false) { low = Math.floor(low); high = Math.ceil(high); }
        low = Math.max(low, 0);
        high = Math.min(high, dim - 1);
        if (low === high) high += 0.001;
        var lowF = f32(low), width = f32(high - low), sF = f32(s), b = f32(base);
        var inv = new Float64Array(dim / 2), gamma = new Float64Array(dim / 2);
        for (var i = 0; i < dim / 2; i++) {
          var ramp = Math.min(Math.max(f32(f32(i - lowF) / width), 0), 1);
          var keep = f32(1 - ramp);
          var power = f32(Math.pow(b, f32((2 * i) / dim)));
          var extrapolated = f32(1 / power), interpolated = f32(1 / f32(sF * power));
          gamma[i] = keep;
          inv[i] = f32(f32(interpolated * f32(1 - keep)) + f32(extrapolated * keep));
        }
        return { inv: inv, factor: factor, gamma: gamma, ramp: { low: low, high: high } };
      } },
    longrope: { keys: ["short_factor", "long_factor", "original_max_position_embeddings", "factor",
      "attention_factor"], lengthDependent: true,
      prepare: function (spec, maxPositions) {  // _prepare_longrope
        ["short_factor", "long_factor"].forEach(function (key) {
          if (spec[key] === undefined) throw missing("longrope", key);
        });
        spec.original_max_position_embeddings = trainedLength(spec, maxPositions);
        if (spec.attention_factor === undefined) {
          spec.factor = derivedFactor(spec, maxPositions);
          if (spec.factor > 1 && spec.original_max_position_embeddings < 2) {
            throw configError("scaling['original_max_position_embeddings'] must be >= 2 for rope_type " +
              "'longrope' without an attention_factor (it divides by its logarithm), got " +
              spec.original_max_position_embeddings);
          }
        }
        return spec;
      },
      inv: function (dim, base, spec, seqLen) {  // _longrope, seq_len an int
        var original = spec.original_max_position_embeddings;
        ["short_factor", "long_factor"].forEach(function (key) {
          if (spec[key].length !== Math.floor(dim / 2)) {
            throw configError("scaling['" + key + "'] must have rotary_dim/2 = " + Math.floor(dim / 2) +
              " entries, got " + spec[key].length);
          }
        });
        var factor = spec.attention_factor;
        if (factor === undefined) {
          factor = spec.factor <= 1 ? 1 : Math.sqrt(1 + Math.log(spec.factor) / Math.log(original));
        }
        var chosen = seqLen && seqLen > original ? spec.long_factor : spec.short_factor;
        var b = f32(base), inv = new Float64Array(chosen.length);
        for (var i = 0; i < inv.length; i++) {
          inv[i] = f32(1 / f32(f32(chosen[i]) * f32(Math.pow(b, f32((2 * i) / dim)))));
        }
        return { inv: inv, factor: factor };
      } },
    llama3: { keys: ["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"],
      oddWidth: true,
      prepare: function (spec, maxPositions) {  // _prepare_llama3
        ["factor", "low_freq_factor", "high_freq_factor"].forEach(function (key) {
          if (spec[key] === undefined) throw missing("llama3", key);
        });
        if (!(spec.high_freq_factor > spec.low_freq_factor)) {
          throw configError("scaling['high_freq_factor'] must be > scaling['low_freq_factor'] (" +
            spec.low_freq_factor + "), got " + spec.high_freq_factor);
        }
        spec.original_max_position_embeddings = trainedLength(spec, maxPositions);
        return spec;
      },
      inv: function (dim, base, spec) {  // _llama3 (also the low == high step describe allows)
        var plain = invFreqBase(dim, base);
        var original = spec.original_max_position_embeddings;
        var lowW = f32(original / spec.low_freq_factor), highW = f32(original / spec.high_freq_factor);
        var span = f32(spec.high_freq_factor - spec.low_freq_factor), lowFF = f32(spec.low_freq_factor);
        var sL = f32(spec.factor), originalF = f32(original), twoPi = f32(TWO_PI);
        var inv = new Float64Array(plain.length), gamma = new Float64Array(plain.length);
        for (var j = 0; j < plain.length; j++) {
          var wavelen = f32(f32(1 / plain[j]) * twoPi);  // 2π / θ: reciprocal, then times 2π
          var scaled = wavelen > lowW ? f32(plain[j] / sL) : plain[j];
          var smooth = f32(f32(f32(f32(1 / wavelen) * originalF) - lowFF) / span);
          if (!(wavelen < highW) && !(wavelen > lowW)) {
            inv[j] = f32(f32(f32(f32(1 - smooth) * scaled) / sL) + f32(smooth * scaled));
            gamma[j] = smooth;
          } else {
            inv[j] = scaled;
            gamma[j] = wavelen > lowW ? 0 : 1;
          }
        }
        return { inv: inv, factor: 1, gamma: gamma };
      } },
    proportional: { keys: ["factor"],
      inv: function (dim, base, spec) {  // _proportional (p-RoPE)
        var angles = Math.floor(((spec.partial_rotary_factor || 1) * dim) / 2);
        var b = f32(base), s = f32(spec.factor || 1), inv = new Float64Array(dim / 2);
        for (var i = 0; i < angles; i++) inv[i] = f32(f32(1 / f32(Math.pow(b, f32((2 * i) / dim)))) / s);
        return { inv: inv, factor: 1 };
      } },
  };
  var VARIANT_NAMES = ["default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"];

  function ropeTypeOf(params) {  // rope_scaling._rope_type
    var ropeType = get(params, "rope_type"), legacy = get(params, "type");
    if (ropeType !== undefined && legacy !== undefined && ropeType !== legacy) {
      throw configError("scaling['type'] must equal scaling['rope_type'] (" + pyRepr(ropeType) +
        ") when both are given (it is the old name of the same key), got " + pyRepr(legacy));
    }
    ropeType = ropeType !== undefined ? ropeType : legacy;
    if (ropeType === undefined) return "default";
    if (typeof ropeType !== "string" || VARIANT_NAMES.indexOf(ropeType) < 0) {
      throw configError("scaling['rope_type'] must be one of " + VARIANT_NAMES.map(pyRepr).join(", ") +
        ", got " + pyRepr(ropeType));
    }
    return ropeType;
  }

  // RopeScaling.from_dict(scaling, max_position_embeddings=..., ignore_keys=...)
  function parseScaling(scaling, maxPositions, ignoreKeys) {
    if (!isDict(scaling)) {
      throw configError("scaling must be a dict (transformers' rope_parameters), a RopeScaling or None, got " +
        given(scaling));
    }
    var nested = Object.keys(scaling).filter(function (k) { return isDict(scaling[k]); });
    if (nested.length) {
      throw configError("scaling must be the rope_parameters of one layer type, got a dict of them (" +
        nested.map(pyRepr).join(", ") + "): pass scaling=rope_parameters[" + pyRepr(nested[0]) + "]");
    }
    var params = {};
    Object.keys(scaling).forEach(function (k) { if (scaling[k] !== null) params[k] = scaling[k]; });
    var ropeType = ropeTypeOf(params);
    var variant = VARIANTS[ropeType];
    delete params.rope_type;
    delete params.type;
    if (has(params, "max_position_embeddings")) {
      var dictMax = checkInt("scaling['max_position_embeddings']", params.max_position_embeddings, 1);
      delete params.max_position_embeddings;
      if (maxPositions !== undefined && maxPositions !== null && dictMax !== maxPositions) {
        throw configError("max_position_embeddings must equal scaling['max_position_embeddings'] (" + dictMax +
          ") when both are given, got " + maxPositions);
      }
      maxPositions = dictMax;
    }
    var allowed = COMMON_KEYS.concat(variant.keys);
    var unknown = Object.keys(params).filter(function (k) {
      return allowed.indexOf(k) < 0 && ignoreKeys.indexOf(k) < 0;
    }).sort();
    if (unknown.length) {
      throw configError("scaling must hold only keys that rope_type '" + ropeType + "' takes (" +
        allowed.concat(["rope_type"]).sort().join(", ") + "), got " + pyRepr(unknown) +
        (ropeType === "default" ? " (a dict without 'rope_type' is 'default')" : "") +
        "; keys a model keeps for itself go in ignore_keys=");
    }
    var spec = { rope_type: ropeType };
    Object.keys(params).forEach(function (key) {
      if (allowed.indexOf(key) < 0) return;  // an ignored key
      spec[key] = KEY_CHECKS[key]("scaling['" + key + "']", params[key]);
    });
    return variant.prepare ? variant.prepare(spec, maxPositions) : spec;
  }

  // rope_scaling.frequency_dim
  function frequencyDim(headDim, spec) {
    checkInt("head_dim", headDim, 1);
    if (spec.rope_type === "proportional") return checkEven("head_dim", headDim);
    var proportion = spec.partial_rotary_factor;
    if (proportion === undefined || proportion === 1) return checkEven("head_dim", headDim);
    var dim = Math.trunc(headDim * proportion);
    if (dim < 2) {
      throw configError("scaling['partial_rotary_factor'] must leave at least 2 rotated channels of head_dim " +
        headDim + ", got " + proportion + " (int(" + headDim + " × " + proportion + ") = " + dim + ")");
    }
    if (dim % 2 && !VARIANTS[spec.rope_type].oddWidth) {
      throw configError("scaling['partial_rotary_factor'] must give an even rotary width for rope_type '" +
        spec.rope_type + "', got " + proportion + " (int(" + headDim + " × " + proportion + ") = " + dim +
        "); transformers rounds an odd width up only for 'default', 'linear', 'dynamic' and 'llama3': " +
        "pass a factor for which head_dim × factor is even");
    }
    return dim;
  }

  // rope_axes.mrope_axes
  function mropeAxes(sections, interleaved) {
    sections = checkInts("sections", sections, 3);
    var pairs = sections[0] + sections[1] + sections[2], axes = [];
    if (!interleaved) {
      sections.forEach(function (count, axis) { for (var i = 0; i < count; i++) axes.push(axis); });
      return axes;
    }
    for (var j = 0; j < pairs; j++) {
      if (j % 3 === 1 && j < 3 * sections[1]) axes.push(1);
      else if (j % 3 === 2 && j < 3 * sections[2]) axes.push(2);
      else axes.push(0);
    }
    var counts = [0, 1, 2].map(function (a) { return axes.filter(function (x) { return x === a; }).length; });
    if (counts.join() !== sections.join()) {
      throw configError("sections must be reachable by interleaving t, h, w over " + pairs + " pairs (h on " +
        "pairs 1, 4, ... below 3*s_h, w on pairs 2, 5, ... below 3*s_w, t elsewhere), got " +
        pyRepr(sections) + ", which interleaves to " + pyRepr(counts));
    }
    return axes;
  }

  // ── the families: describe._ROPE_FAMILIES and the layer-type rules ──

  function layersFull(config, n) {
    var out = [];
    for (var i = 0; i < n; i++) out.push("full_attention");
    return out;
  }

  function layersAlternating(config, n) {  // Gemma 2: (i + 1) % 2
    var out = [];
    for (var i = 0; i < n; i++) out.push((i + 1) % 2 ? "sliding_attention" : "full_attention");
    return out;
  }

  function layersPattern(fallback) {  // Gemma 3 (6), Cohere2 (4)
    return function (config, n) {
      var pattern = intField(config, ["sliding_window_pattern"], fallback), out = [];
      for (var i = 0; i < n; i++) out.push((i + 1) % pattern ? "sliding_attention" : "full_attention");
      return out;
    };
  }

  function layersQwen(config, n) {  // Qwen2/3: from max_window_layers on, if use_sliding_window
    if (!truthy(get(config, "use_sliding_window")) || get(config, "sliding_window") === undefined) {
      return layersFull(config, n);
    }
    var first = intField(config, ["max_window_layers"], n), out = [];
    for (var i = 0; i < n; i++) out.push(i >= first ? "sliding_attention" : "full_attention");
    return out;
  }

  function layersWindow(config, n) {  // Mistral, Phi-3: config.sliding_window in every layer
    var kind = get(config, "sliding_window") === undefined ? "full_attention" : "sliding_attention", out = [];
    for (var i = 0; i < n; i++) out.push(kind);
    return out;
  }

  var LAYER_TYPE_RULES = {
    full: layersFull, alternating: layersAlternating, gemma3: layersPattern(6), cohere2: layersPattern(4),
    qwen: layersQwen, window: layersWindow,
  };

  function family(options) {
    return Object.assign({ theta: 10000, layerTypes: "full", nopeTypes: [], noRopeLayers: false, defaults: {} },
      options || {});
  }

  var ROPE_FAMILIES = {
    llama: family(), mistral: family({ layerTypes: "window", defaults: { sliding_window: 4096 } }),
    qwen2: family({ layerTypes: "qwen" }), qwen3: family({ layerTypes: "qwen" }),
    qwen2_vl: family({ theta: 1e6, layerTypes: "qwen" }), qwen2_vl_text: family({ theta: 1e6, layerTypes: "qwen" }),
    qwen2_5_vl: family({ theta: 1e6, layerTypes: "qwen" }),
    qwen2_5_vl_text: family({ theta: 1e6, layerTypes: "qwen" }),
    qwen3_vl_text: family({ theta: 5e6 }),
    gemma2: family({ layerTypes: "alternating" }),
    gemma3_text: family({ theta: 1e6, layerTypes: "gemma3" }),
    cohere2: family({ layerTypes: "cohere2", nopeTypes: ["full_attention"] }),
    gpt_oss: family({ theta: 150000 }),
    smollm3: family({ theta: 2e6, noRopeLayers: true }),
    llama4_text: family({ theta: 500000, layerTypes: "chunked", noRopeLayers: true }),
    phi3: family({ layerTypes: "window" }), gpt_neox: family(), falcon: family({ defaults: { num_hidden_layers: 32 } }),
    deepseek_v2: family(), deepseek_v3: family(),
  };
  var MODEL_KEYS = ["mrope_section", "mrope_interleaved"];
  var PARENTS = {
    llama4: "llama4_text", gemma3: "gemma3_text", qwen3_vl: "qwen3_vl_text", qwen2_vl: "qwen2_vl_text",
    qwen2_5_vl: "qwen2_5_vl_text",
  };
  var OTHER_FAMILIES = ["bloom", "mpt", "falcon", "t5", "gpt2", "bert"];
  var SUPPORTED = Object.keys(ROPE_FAMILIES).concat(OTHER_FAMILIES).filter(function (name, i, all) {
    return all.indexOf(name) === i;
  }).sort();

  function copyDict(value) {
    var out = {};
    Object.keys(value).forEach(function (k) { out[k] = isDict(value[k]) ? Object.assign({}, value[k]) : value[k]; });
    return out;
  }

  function ropeDictOf(config) {  // describe._rope_dict
    var names = ["rope_parameters", "rope_scaling"];
    for (var i = 0; i < names.length; i++) {
      var value = get(config, names[i]);
      if (value === undefined) continue;
      if (!isDict(value)) throw configError("config['" + names[i] + "'] must be a dict or null, got " + given(value));
      return copyDict(value);
    }
    return undefined;
  }

  function gemma3Legacy(config, theta) {  // describe._gemma3_legacy
    var scaling = ropeDictOf(config) || {};
    return {
      full_attention: Object.assign({ rope_type: "default" }, scaling, { rope_theta: theta }),
      sliding_attention: { rope_type: "default", rope_theta: numberField(config, "rope_local_base_freq", 10000) },
    };
  }

  function standardize(entry, config, theta, partial) {  // describe._standardize
    if (entry === undefined || entry === null) return null;
    if (!isDict(entry)) throw configError("config's RoPE dict must hold a dict or null per layer type, got " + given(entry));
    if (!has(entry, "rope_theta")) entry.rope_theta = theta;
    if (partial !== undefined && !has(entry, "partial_rotary_factor")) entry.partial_rotary_factor = partial;
    var ropeType = has(entry, "rope_type") ? entry.rope_type : has(entry, "type") ? entry.type : "default";
    if (["llama3", "yarn", "longrope"].indexOf(ropeType) >= 0) {
      if (get(config, "original_max_position_embeddings") !== undefined) {
        entry.original_max_position_embeddings = config.original_max_position_embeddings;
      } else if (get(config, "max_position_embeddings") !== undefined && !has(entry, "original_max_position_embeddings")) {
        entry.original_max_position_embeddings = config.max_position_embeddings;
      }
    }
    return entry;
  }

  function parseEntry(entry, maxPositions) {  // describe._parse: the llama3 low == high step too
    var ropeType = has(entry, "rope_type") ? entry.rope_type : entry.type;
    var low = entry.low_freq_factor, high = entry.high_freq_factor;
    if (ropeType === "llama3" && isNumber(low) && isNumber(high) && low === high) {
      var spec = parseScaling(Object.assign({}, entry, { high_freq_factor: low + 1 }), maxPositions, MODEL_KEYS);
      spec.high_freq_factor = spec.low_freq_factor;
      return spec;
    }
    return parseScaling(entry, maxPositions, MODEL_KEYS);
  }

  function usesRopeOf(config, n, fam) {  // describe._uses_rope
    if (!fam.noRopeLayers) return null;
    var flags = get(config, "no_rope_layers");
    if (!truthy(flags)) {
      var interval = intField(config, ["no_rope_layer_interval"], 4), out = [];
      for (var i = 0; i < n; i++) out.push(Boolean((i + 1) % interval));
      return out;
    }
    if (!Array.isArray(flags)) throw configError("config['no_rope_layers'] must be a list of 0 and 1, got " + given(flags));
    if (flags.length !== n) {
      throw configError("config['no_rope_layers'] must have one entry per layer (" + n +
        ", num_hidden_layers), got " + flags.length);
    }
    return flags.slice();
  }

  function layerTypesOf(config, n, fam, usesRope) {  // describe._layer_types
    var givenTypes = get(config, "layer_types");
    if (givenTypes !== undefined) {
      if (!Array.isArray(givenTypes)) {
        throw configError("config['layer_types'] must be a list of strings, got " + given(givenTypes));
      }
      if (givenTypes.length !== n) {
        throw configError("config['layer_types'] must have one entry per layer (" + n +
          ", num_hidden_layers), got " + givenTypes.length);
      }
      givenTypes.forEach(function (t, i) {  // layer_types._check_layer_types
        if (typeof t !== "string") throw configError("layer_types[" + i + "] must be a string, got " + given(t));
      });
      return givenTypes.slice();
    }
    if (fam.layerTypes === "chunked") {  // Llama 4: RoPE layers in chunks, NoPE layers global
      return usesRope.map(function (rope) { return truthy(rope) ? "chunked_attention" : "full_attention"; });
    }
    return LAYER_TYPE_RULES[fam.layerTypes](config, n);
  }

  function windowOf(config, layerType) {  // describe._window
    if (layerType === "sliding_attention") return get(config, "sliding_window");
    if (layerType === "chunked_attention") return get(config, "attention_chunk_size");
    return undefined;
  }

  function checkNoRopeFlags(flags) {  // layer_types._check_no_rope_layers
    return flags.map(function (flag, i) {
      if (typeof flag !== "boolean" && !isInt(flag)) {
        throw configError("no_rope_layers[" + i + "] must be 0 or 1, got " + given(flag));
      }
      if (flag !== true && flag !== false && flag !== 0 && flag !== 1) {
        throw configError("no_rope_layers[" + i + "] must be 0 or 1 (1 = RoPE, 0 = NoPE), got " + pyRepr(flag));
      }
      return Boolean(flag);
    });
  }

  // rope_scaling.rope_inv_freq(head_dim, scaling=spec, seq_len=seqLen) for a parsed spec
  function specInvFreq(headDim, spec, seqLen) {
    var base = spec.rope_theta !== undefined ? spec.rope_theta : 10000;
    var dim = frequencyDim(headDim, spec);
    return VARIANTS[spec.rope_type].inv(dim, base, spec, seqLen);
  }

  function describeRope(config, modelType, seqLen) {  // describe._describe_rope
    var fam = ROPE_FAMILIES[modelType];
    config = Object.assign({}, fam.defaults, config);
    var n = intField(config, ["num_hidden_layers"]);
    var maxPositions = get(config, "max_position_embeddings");
    if (maxPositions !== undefined) checkInt("config['max_position_embeddings']", maxPositions, 1);
    var theta = numberField(config, "rope_theta", numberField(config, "rotary_emb_base", fam.theta));
    var partial = field(config, ["partial_rotary_factor", "rotary_pct"]);
    var headDim = modelType === "deepseek_v2" || modelType === "deepseek_v3"
      ? intField(config, ["qk_rope_head_dim"]) : headDimOf(config);
    var usesRope = usesRopeOf(config, n, fam);
    var types = layerTypesOf(config, n, fam, usesRope);
    var raw = ropeDictOf(config);
    if (modelType === "gemma3_text" && !(raw && Object.keys(raw).some(function (k) { return types.indexOf(k) >= 0; }))) {
      raw = gemma3Legacy(config, theta);
    }
    var perType = raw !== undefined && Object.keys(raw).some(function (k) { return types.indexOf(k) >= 0; });
    var raws = {}, parsed = {};
    if (perType) {
      types.forEach(function (t) {
        if (has(raws, t)) return;
        raws[t] = standardize(raw[t], config, theta, partial);
        parsed[t] = raws[t] === null ? null : parseEntry(raws[t], maxPositions);
      });
    } else {
      var entry = standardize(Object.assign({}, raw || {}), config, theta, partial);
      var shared = parseEntry(entry, maxPositions);
      types.forEach(function (t) { raws[t] = entry; parsed[t] = shared; });
    }
    var rotates = usesRope === null ? types.map(function () { return true; }) : checkNoRopeFlags(usesRope);
    var frequencies = {};  // one computation per layer type, as layers of a type share one spec
    var layers = types.map(function (layerType, index) {
      var layer = { index: index, kind: "none", layerType: layerType, window: windowOf(config, layerType) };
      var spec = parsed[layerType];
      if (!rotates[index] || fam.nopeTypes.indexOf(layerType) >= 0 || spec === null) return layer;
      if (!has(frequencies, layerType)) {
        var computed = specInvFreq(headDim, spec, seqLen);
        var sections = raws[layerType] && get(raws[layerType], "mrope_section");
        if (sections !== undefined) {
          computed.axes = mropeAxes(sections, Boolean(raws[layerType].mrope_interleaved));
          if (computed.axes.length !== computed.inv.length) {
            throw configError("config's mrope_section must count the " + computed.inv.length + " frequency " +
              "pairs of a head, got " + pyRepr(sections) + " (" + computed.axes.length + " pairs)");
          }
        }
        frequencies[layerType] = computed;
      }
      var f = frequencies[layerType];
      return Object.assign(layer, {
        kind: "rope", spec: spec, ropeType: spec.rope_type, ropeTheta: spec.rope_theta,
        rotaryDim: 2 * f.inv.length, headDim: headDim, inv: f.inv, attentionFactor: f.factor,
        gamma: f.gamma || null, ramp: f.ramp || null, mropeAxes: f.axes || null,
      });
    });
    return { modelType: modelType, maxPositions: maxPositions, layers: layers };
  }

  // ── ALiBi, T5 and learned families ──

  function alibiSlopeValues(n) {  // alibi.alibi_slope_values (float64)
    var p = Math.pow(2, Math.floor(Math.log2(n)));
    var extra = powerOfTwoSlopes(2 * p).filter(function (_, i) { return i % 2 === 0; });
    return powerOfTwoSlopes(p).concat(extra.slice(0, n - p));
  }

  function alibiLayers(slopes, n) {
    var layers = [];
    for (var i = 0; i < n; i++) layers.push({ index: i, kind: "alibi", alibiSlopes: slopes });
    return layers;
  }

  function mptSlopes(heads, biasMax) {  // describe._mpt_slopes
    var power = Math.pow(2, Math.ceil(Math.log2(heads))), slopes = [];
    for (var h = 1; h <= power; h++) slopes.push(1 / Math.pow(2, (biasMax * h) / power));
    if (power !== heads) {
      slopes = slopes.filter(function (_, i) { return i % 2 === 1; })
        .concat(slopes.filter(function (_, i) { return i % 2 === 0; })).slice(0, heads);
    }
    return slopes;
  }

  function describeOther(config, modelType, seqLen) {
    if (modelType === "bloom") {  // _describe_bloom
      var heads = intField(config, ["n_head", "num_attention_heads"], 8);
      var n = intField(config, ["n_layer", "num_hidden_layers"], 2);
      return { modelType: "bloom", maxPositions: undefined, layers: alibiLayers(alibiSlopeValues(heads), n) };
    }
    if (modelType === "mpt") {  // _describe_mpt
      var attn = has(config, "attn_config") && truthy(config.attn_config) ? config.attn_config : {};
      if (!isDict(attn)) throw configError("config['attn_config'] must be a dict, got " + given(attn));
      var mptHeads = intField(config, ["n_heads"], 16);
      var mptLayers = intField(config, ["n_layers"], 24);
      var seq = intField(config, ["max_seq_len"], 2048);
      if (has(attn, "alibi") && attn.alibi !== true) {
        throw configError("config['attn_config']['alibi'] must be true: transformers' MptModel always adds " +
          "ALiBi, got " + pyRepr(attn.alibi));
      }
      var slopes = mptSlopes(mptHeads, numberField(attn, "alibi_bias_max", 8));
      return { modelType: "mpt", maxPositions: seq, layers: alibiLayers(slopes, mptLayers) };
    }
    if (modelType === "falcon") {  // _describe_falcon
      var alibi = has(config, "alibi") ? config.alibi : false;
      if (typeof alibi !== "boolean") throw configError("config['alibi'] must be true or false, got " + given(alibi));
      if (!alibi) return describeRope(config, "falcon", seqLen);
      var falconHeads = intField(config, ["num_attention_heads", "n_head"], 71);
      var falconLayers = intField(config, ["num_hidden_layers", "n_layer"], 32);
      return { modelType: "falcon", maxPositions: get(config, "max_position_embeddings"),
        layers: alibiLayers(alibiSlopeValues(falconHeads), falconLayers) };
    }
    if (modelType === "t5") {  // _describe_t5
      var buckets = intField(config, ["relative_attention_num_buckets"], 32);
      var distance = intField(config, ["relative_attention_max_distance"], 128);
      var encoder = intField(config, ["num_layers"], 6);
      var decoder = intField(config, ["num_decoder_layers", "num_layers"], 6);
      var t5 = [];
      [["encoder", encoder, true], ["decoder", decoder, false]].forEach(function (stack) {
        for (var i = 0; i < stack[1]; i++) {
          t5.push({ index: i, kind: "t5-bias", stack: stack[0], numBuckets: buckets, maxDistance: distance,
            hasBiasTable: i === 0, bidirectional: stack[2] });
        }
      });
      return { modelType: "t5", maxPositions: get(config, "n_positions"), layers: t5 };
    }
    // gpt2, bert: _describe_learned
    var rows = modelType === "gpt2" ? intField(config, ["n_positions"], 1024)
      : intField(config, ["max_position_embeddings"], 512);
    var count = modelType === "gpt2" ? intField(config, ["n_layer"], 12) : intField(config, ["num_hidden_layers"], 12);
    var learned = [];
    for (var j = 0; j < count; j++) learned.push({ index: j, kind: "learned", maxPositions: rows });
    return { modelType: modelType, maxPositions: rows, layers: learned };
  }

  /* posenc.describe(config, seq_len=seqLen): {modelType, maxPositions, layers}; each layer
     {index, kind ("rope", "none", "alibi", "t5-bias", "learned"), layerType, window, stack,
      spec (the parsed RoPE dict), ropeType, ropeTheta, rotaryDim, headDim, inv (float32
      values), attentionFactor, gamma, ramp, mropeAxes, alibiSlopes, numBuckets, maxDistance,
      hasBiasTable, bidirectional, maxPositions} */
  function describeConfig(config, seqLen) {
    if (!isDict(config)) throw configError("config must be a dict (a parsed config.json), got " + given(config));
    if (seqLen !== undefined && seqLen !== null) checkInt("seq_len", seqLen, 1);
    else seqLen = undefined;
    var modelType = get(config, "model_type");  // describe._text_part
    if (modelType === undefined) {
      throw configError("config['model_type'] must name the model family (it is in every transformers " +
        "config.json), got none");
    }
    if (typeof modelType !== "string") throw configError("config['model_type'] must be a string, got " + given(modelType));
    var text = get(config, "text_config");
    if (isDict(text) && has(PARENTS, modelType)) {
      config = text;
      modelType = get(text, "model_type") || PARENTS[modelType];
    }
    if (has(PARENTS, modelType)) modelType = PARENTS[modelType];
    if (has(ROPE_FAMILIES, modelType)) return describeRope(config, modelType, seqLen);
    if (OTHER_FAMILIES.indexOf(modelType) >= 0) return describeOther(config, modelType, seqLen);
    throw configError("config['model_type'] must be one posenc knows (" + SUPPORTED.join(", ") + "), got " +
      pyRepr(modelType));
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
      // posenc (like transformers' ramp) needs the fast end above the slow one
      if (s.method === "yarn" && s.betaFast < s.betaSlow) return { error: "beta" };
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
      panel.root.querySelectorAll("[data-error]").forEach(function (node) {
        node.hidden = node.dataset.error !== data.error;  // the message of this error only
      });
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

  /* Your model: a committed config (embedded in the page by tools/hooks/released_configs.py,
     from posenc/configs/) or a pasted config.json, read by describeConfig above. Nothing is
     fetched: the pasted text never leaves the page. */
  var DEFAULT_LENGTH = 4096;  // the length shown when a config states no context
  var releasedCache = null;

  function releasedConfigs() {
    if (!releasedCache) {
      var node = document.getElementById("pe-released-configs");
      releasedCache = {};
      (node ? JSON.parse(node.dataset.configs) : []).forEach(function (entry) { releasedCache[entry.name] = entry; });
    }
    return releasedCache;
  }

  function word(panel, key) {
    var text = panel.root.getAttribute("data-word-" + key);
    return text === null ? key : text;
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, key) { return values[key]; });
  }

  // "0–4, 6–10, 12–16, …": runs of consecutive layers, the first three of them
  function layerRuns(indices, separator) {
    var runs = [];
    indices.forEach(function (i) {
      var last = runs[runs.length - 1];
      if (last && last[1] === i - 1) last[1] = i;
      else runs.push([i, i]);
    });
    var text = runs.slice(0, 3).map(function (r) { return r[0] === r[1] ? String(r[0]) : r[0] + "–" + r[1]; });
    if (runs.length > 3) text.push("…");
    return text.join(separator);
  }

  // the context the config states (describe's max_position_embeddings), for the length control
  function statedContext(config) {
    try {
      return describeConfig(config).maxPositions || DEFAULT_LENGTH;
    } catch (error) {
      if (!error.posencConfig) throw error;
      return undefined;
    }
  }

  function scalingText(spec) {
    var parts = [spec.rope_type];
    if (spec.factor !== undefined && spec.rope_type !== "default") parts.push("×" + fmt(spec.factor, 6));
    if (spec.partial_rotary_factor !== undefined && spec.partial_rotary_factor !== 1) {
      parts.push("partial_rotary_factor " + fmt(spec.partial_rotary_factor, 6));
    }
    return parts.join(" ");
  }

  PANELS.model = {
    state: { model: "llama-3.1-8b", seqLen: 131072, group: 0 },
    init: function (panel) {
      var configs = releasedConfigs();
      var select = panel.root.querySelector('select[data-param="model"]');
      var pasted = select.querySelector('option[value="pasted"]');
      Object.keys(configs).forEach(function (name) {
        var option = document.createElement("option");
        option.value = name;
        option.textContent = configs[name].model;
        select.insertBefore(option, pasted);
      });
      var textarea = panel.root.querySelector("textarea[data-config]");
      panel.textarea = textarea;
      if (!has(configs, panel.state.model)) {
        panel.state.model = "pasted";
        panel.state.text = textarea.value;
      } else {
        textarea.value = JSON.stringify(configs[panel.state.model].config, null, 2);
        panel.state.seqLen = statedContext(configs[panel.state.model].config);
      }
      function read() {
        select.value = "pasted";
        panel.onChange("model", "pasted");
      }
      panel.root.querySelector("button[data-read]").addEventListener("click", read);
      textarea.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) read();
      });
      textarea.addEventListener("paste", function () { setTimeout(read); });  // after the text is in
    },
    // a model picked (or the pasted text read): its own context, its first group of layers
    changed: function (panel, param, value) {
      if (param === "group") return Number(value);
      if (param !== "model") return value;
      var config;
      if (value === "pasted") {
        panel.state.text = panel.textarea.value;
        try { config = JSON.parse(panel.state.text); } catch (error) { config = undefined; }
      } else {
        delete panel.state.text;
        config = releasedConfigs()[value].config;
        panel.textarea.value = JSON.stringify(config, null, 2);
      }
      var length = config === undefined ? undefined : statedContext(config);
      if (length !== undefined) {
        panel.state.seqLen = length;
        if (panel.controls.seqLen) panel.controls.seqLen.set(length);
      }
      panel.state.group = 0;
      return value;
    },
    compute: function (s) {
      var config;
      if (s.model === "pasted") {
        try {
          config = JSON.parse(s.text || "");
        } catch (error) {
          return { error: "config.json must be JSON: " + error.message };
        }
      } else {
        config = releasedConfigs()[s.model].config;
      }
      var described;
      try {
        described = describeConfig(config, s.seqLen);
      } catch (error) {
        if (!error.posencConfig) throw error;
        return { error: error.message };
      }
      // layers with the same frequencies form a group (Gemma 3: its local and its global layers)
      var groups = [], byKey = {};
      described.layers.forEach(function (layer) {
        if (layer.kind !== "rope") return;
        var key = [layer.ropeType, layer.ropeTheta, layer.rotaryDim, layer.attentionFactor,
          Array.from(layer.inv).join(","), String(layer.mropeAxes)].join("|");
        if (!has(byKey, key)) {
          byKey[key] = { layer: layer, indices: [], types: [] };
          groups.push(byKey[key]);
        }
        byKey[key].indices.push(layer.index);
        if (byKey[key].types.indexOf(layer.layerType) < 0) byKey[key].types.push(layer.layerType);
      });
      var group = groups.length ? groups[Math.min(s.group, groups.length - 1)] : null;
      var pairs = null;
      if (group) {
        var layer = group.layer, spec = layer.spec;
        // the same head without scaling: the default frequencies of the same base and width
        var plain = spec.rope_type === "proportional" ? invFreqBase(layer.headDim, layer.ropeTheta)
          : specInvFreq(layer.headDim, { rope_type: "default", rope_theta: layer.ropeTheta,
            partial_rotary_factor: spec.partial_rotary_factor }).inv;
        pairs = Array.from(layer.inv, function (theta, i) {
          return { theta: theta, plain: plain[i], ratio: plain[i] ? theta / plain[i] : NaN,
            wavelength: TWO_PI / theta, gamma: layer.gamma ? layer.gamma[i] : null,
            axis: layer.mropeAxes ? layer.mropeAxes[i] : null };
        });
      }
      return { described: described, groups: groups, group: group, pairs: pairs };
    },
    render: function (panel, s, data) {
      var root = panel.root;
      root.querySelector("[data-error]").hidden = !data.error;
      root.querySelector("[data-result]").hidden = Boolean(data.error);
      out(panel, "error", data.error || "");
      var entry = releasedConfigs()[s.model];
      var source = root.querySelector("a[data-source]");
      root.querySelector("[data-released]").hidden = !entry || Boolean(data.error);
      if (entry) {
        source.href = entry.read;
        source.textContent = entry.hub;
      }
      out(panel, "python", "posenc.describe(" + (entry ? 'posenc.released_config("' + s.model + '")["config"]'
        : 'json.load(open("config.json"))') + ", seq_len=" + s.seqLen + ")");
      if (data.error) return;
      var described = data.described, layers = described.layers;
      var count = function (kind) { return layers.filter(function (l) { return l.kind === kind; }).length; };
      var trained = data.groups.map(function (g) { return g.layer.spec.original_max_position_embeddings; })
        .filter(function (x) { return x !== undefined; });
      out(panel, "model-type", described.modelType);
      out(panel, "layers", String(layers.length));
      out(panel, "rope", String(count("rope")));
      out(panel, "none", String(count("none")));
      out(panel, "other", String(layers.length - count("rope") - count("none")));
      out(panel, "context", described.maxPositions ? String(described.maxPositions) : "–");
      out(panel, "trained", trained.length ? String(trained[0]) : "–");
      var kinds = layers.map(function (l) { return l.kind; });
      root.querySelectorAll("[data-show]").forEach(function (node) {
        node.hidden = kinds.indexOf(node.dataset.show) < 0;
      });
      fillTable(panel, "layers", layers.map(function (l) {
        var rope = l.kind === "rope";
        return [
          l.stack ? word(panel, l.stack) + " " + l.index : l.index,
          { text: l.layerType || "–", value: l.layerType || "" },
          l.window !== undefined && l.window !== null ? num(l.window) : { text: "–" },
          { text: word(panel, l.kind), value: l.kind },
          rope ? num(l.ropeTheta, 6) : { text: "–" },
          rope ? { text: scalingText(l.spec), value: l.ropeType } : { text: "–" },
          rope ? { text: l.rotaryDim + " / " + l.headDim, value: l.rotaryDim } : { text: "–" },
          rope ? num(l.attentionFactor, 6) : { text: "–" },
        ];
      }));
      var alibi = layers.filter(function (l) { return l.kind === "alibi"; });
      if (alibi.length) {
        var slopes = alibi[0].alibiSlopes;
        out(panel, "alibi-heads", String(slopes.length));
        out(panel, "alibi-first", fmt(slopes[0], 6));
        out(panel, "alibi-last", fmt(slopes[slopes.length - 1], 6));
      }
      var t5 = layers.filter(function (l) { return l.kind === "t5-bias"; });
      if (t5.length) {
        out(panel, "t5-buckets", String(t5[0].numBuckets));
        out(panel, "t5-distance", String(t5[0].maxDistance));
      }
      var learned = layers.filter(function (l) { return l.kind === "learned"; });
      if (learned.length) out(panel, "learned-rows", String(learned[0].maxPositions));
      // the groups of RoPE layers, one option each
      var groupSelect = root.querySelector('select[data-param="group"]');
      var template = root.getAttribute("data-format-group") || "{layers}";
      var separator = root.getAttribute("data-word-separator") || ", ";
      groupSelect.replaceChildren.apply(groupSelect, data.groups.map(function (g, i) {
        var option = document.createElement("option");
        option.value = String(i);
        option.textContent = fill(template, {
          layers: layerRuns(g.indices, separator), count: g.indices.length, types: g.types.join(separator),
          base: fmt(g.layer.ropeTheta, 6), scaling: scalingText(g.layer.spec),
        });
        return option;
      }));
      if (!data.group) return;
      var index = data.groups.indexOf(data.group);
      groupSelect.value = String(index);
      panel.state.group = index;
      var layer = data.group.layer, spec = layer.spec, pairs = data.pairs, L = s.seqLen;
      var L0 = spec.original_max_position_embeddings;
      var factor = spec.factor;
      var kept = 0, divided = 0;
      pairs.forEach(function (p) {
        if (Math.abs(p.ratio - 1) <= 1e-6) kept++;
        else if (factor && Math.abs(p.ratio * factor - 1) <= 1e-6) divided++;
      });
      var turns = function (length) {
        return pairs.filter(function (p) { return p.wavelength <= length; }).length;
      };
      out(panel, "pairs", String(pairs.length));
      out(panel, "rotary", String(layer.rotaryDim));
      out(panel, "head", String(layer.headDim));
      out(panel, "length", String(L));
      out(panel, "turning", String(turns(L)));
      out(panel, "trained-length", L0 ? String(L0) : "–");
      out(panel, "turning-trained", L0 ? String(turns(L0)) : "–");
      out(panel, "kept", String(kept));
      out(panel, "divided", String(divided));
      out(panel, "between", String(pairs.length - kept - divided));
      out(panel, "attention", fmt(layer.attentionFactor, 6));
      root.dataset.attentionFactor = String(layer.attentionFactor);
      fillTable(panel, "pairs", pairs.map(function (p, i) {
        return [
          i, num(p.theta, 6), isFinite(p.ratio) ? num(p.ratio, 6) : { text: "–" }, num(p.wavelength, 6),
          L0 ? num(L0 / p.wavelength, 4) : { text: "–" }, num(L / p.wavelength, 4),
          p.gamma !== null ? num(p.gamma, 6) : { text: "–" },
          p.axis !== null ? { text: "thw"[p.axis], value: p.axis } : { text: "–" },
        ];
      }));
      var scaled = pairs.some(function (p) { return isFinite(p.ratio) && Math.abs(p.ratio - 1) > 1e-6; });
      root.querySelectorAll("[data-scaled]").forEach(function (node) { node.hidden = !scaled; });
      root.querySelectorAll("[data-trained]").forEach(function (node) { node.hidden = !L0; });
      var half = pairs.length;
      var finite = pairs.filter(function (p) { return isFinite(p.wavelength); });
      panel.charts["model-wavelength"] = function (host, size) {
        var values = finite.map(function (p) { return p.wavelength; }).concat([L]);
        if (scaled) finite.forEach(function (p) { if (isFinite(TWO_PI / p.plain)) values.push(TWO_PI / p.plain); });
        if (L0) values.push(L0);
        var series = [];
        if (scaled) {
          series.push({ points: finite.map(function (p) { return [pairs.indexOf(p), TWO_PI / p.plain]; }), cls: "pe-s3", dots: true });
        }
        series.push({ points: finite.map(function (p) { return [pairs.indexOf(p), p.wavelength]; }), cls: "pe-s1", dots: true });
        var hlines = [{ y: L, cls: "pe-ref pe-s2" }];
        if (L0) hlines.push({ y: L0, cls: "pe-ref" });
        drawChart(host, {
          x: { min: -0.5, max: half - 0.5, integer: true },
          y: { min: Math.min.apply(null, values) / 1.6, max: Math.max.apply(null, values) * 1.6, log: true },
          hlines: hlines, series: series,
        }, size);
      };
      if (!scaled) return;
      var ratios = finite.map(function (p) { return [pairs.indexOf(p), p.ratio]; });
      var blended = [];
      pairs.forEach(function (p, i) { if (p.gamma !== null && p.gamma > 0 && p.gamma < 1) blended.push(i); });
      panel.charts["model-ratio"] = function (host, size) {
        var lo = Math.min(factor ? 1 / factor : 1, Math.min.apply(null, ratios.map(function (r) { return r[1]; })));
        var hi = Math.max(1, Math.max.apply(null, ratios.map(function (r) { return r[1]; })));
        if (hi / lo < 2) lo = hi / 2;
        var hlines = [{ y: 1, cls: "pe-ref" }];
        if (factor && factor > 1) hlines.push({ y: 1 / factor, cls: "pe-ref pe-s2" });
        drawChart(host, {
          x: { min: -0.5, max: half - 0.5, integer: true },
          y: { min: lo / 1.15, max: hi * 1.15, log: true, radix: 2, plain: true },
          bands: blended.length ? [{ from: blended[0] - 0.5, to: blended[blended.length - 1] + 0.5, cls: "pe-band" }] : [],
          hlines: hlines,
          series: [{ points: ratios, cls: "pe-s1", dots: true, line: true }],
        }, size);
      };
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
    if (definition.init) definition.init(panel);  // the model panel: its list of models

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
      if (definition.changed) value = definition.changed(panel, param, value);
      panel.state[param] = value;
      schedule();
    }
    panel.onChange = onChange;

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
      describe: describeConfig,
    },
  };
  init();
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(init);
  }
})();
