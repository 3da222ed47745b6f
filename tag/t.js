/* Marquee ad tag (docs/tag.md). One script per page, one element per slot:
 *   <script async src="https://ADS/t.js"></script>
 *   <div data-marquee-placement="home-top"></div>
 * It asks one decision for every slot, renders each ad without ever letting
 * it touch the page (image and native ads are built with DOM calls; HTML ads
 * live in a sandboxed frame of the ad server's origin), fires the impression
 * URL once the ad has rendered and the view URL once MRC's rule is met, and
 * sends clicks through the signed click URL. No dependency, no build step. */
(function (w, d) {
  'use strict';
  if (w.marquee && w.marquee.fill) return; // loaded twice
  var me = d.currentScript || d.querySelector('script[src$="/t.js"]');
  if (!me) return;
  var opt = me.dataset; // data-server, data-user, data-consent, data-gdpr, data-gdpr-consent, data-cookie, data-keywords, data-age, data-gender, data-country, data-platform, data-marquee-kv, data-lazy, data-spa, data-prebid, data-prebid-global
  var origin = (opt.server || new URL(me.src, d.baseURI).origin).replace(/\/$/, ''); // data-server: a self-hosted copy's ad server
  // data-prebid: the page runs Prebid.js; its glue (/pb.js, apart: pages
  // without Prebid never load it) adds each slot's bids to the decision.
  var glue = opt.prebid == null ? Promise.resolve() : new Promise(function (ok) {
    var s = d.createElement('script');
    s.src = origin + '/pb.js';
    s.onload = s.onerror = function () { ok(w.marqueePrebid); };
    d.head.appendChild(s);
  });
  var n = 0;
  var IO = w.IntersectionObserver;
  // kv reads a data-marquee-kv attribute: a JSON object of key-values
  // ({"section": "sports", "tags": ["a", "b"]}), or null.
  function kv(s) {
    try {
      var o = s && JSON.parse(s);
      return o && typeof o === 'object' && !Array.isArray(o) ? o : null;
    } catch (e) { return null; }
  }
  var pageKV = kv(opt.marqueeKv) || {}; // the page's key-values (marquee.set changes them)

  function el(tag, attrs, parent) {
    var e = d.createElement(tag);
    for (var k in attrs) if (attrs[k] != null && attrs[k] !== '') e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(tag, cls, s, parent) {
    if (!s) return null;
    var e = el(tag, { 'class': cls }, parent);
    e.textContent = s;
    return e;
  }
  // ping fires a tracking URL once, without cookies, and never fails loudly.
  function ping(url) {
    if (!url) return;
    try {
      fetch(url, { mode: 'no-cors', credentials: 'omit', keepalive: true, cache: 'no-store' }).catch(function () {});
    } catch (e) { (new Image()).src = url; }
  }
  function asset(u) { return u && u.charAt(0) === '/' ? origin + u : u; }

  // tcf is the page's IAB TCF v2 consent — data-gdpr and data-gdpr-consent,
  // else what the page's CMP (__tcfapi) answers within 500 ms — as the
  // decision's consent {gdpr, tcf}, or null: the ad server judges it.
  function tcf() {
    return new Promise(function (done) {
      if (opt.gdpr || opt.gdprConsent) return done({ gdpr: opt.gdpr === '0' ? 0 : 1, tcf: opt.gdprConsent });
      if (typeof w.__tcfapi !== 'function') return done(null);
      var t = setTimeout(done, 500, null);
      try {
        w.__tcfapi('getTCData', 2, function (r, ok) {
          clearTimeout(t);
          done(ok && r ? { gdpr: r.gdprApplies ? 1 : 0, tcf: r.tcString } : null);
        });
      } catch (e) { clearTimeout(t); done(null); }
    });
  }

  // gpp: what the page's CMP (__gpp) says, ready within 500 ms, or null.
  function gpp() {
    return new Promise(function (done) {
      if (typeof w.__gpp !== 'function') return done(null);
      var t = setTimeout(done, 500, null);
      function fin(p) {
        if (!p || p.signalStatus != 'ready') return;
        clearTimeout(t);
        var s = (p.applicableSections || []).filter(function (i) { return i > 0; });
        done(p.gppString && s.length ? { gpp: p.gppString, gppSid: s } : null);
      }
      try {
        w.__gpp('ping', function (p) {
          if (p && p.signalStatus === 'ready') return fin(p);
          w.__gpp('addEventListener', function (e) { fin(e && e.pingData); });
        });
      } catch (e) { clearTimeout(t); done(null); }
    });
  }

  // The user key: only the publisher's own (data-user) or, where the publisher
  // opts in (data-cookie="1"), the tag's first-party cookie; and only with
  // consent (data-consent="1", or a TCF or GPP signal the ad server checks);
  // no cookie is minted under Global Privacy Control.
  function userKey(c) {
    if (opt.consent !== '1' && !c) return '';
    if (opt.user) return opt.user;
    if (opt.cookie !== '1' || navigator.globalPrivacyControl) return '';
    var m = /(?:^|; )mq_uid=([A-Za-z0-9]+)/.exec(d.cookie);
    if (m) return m[1];
    var a = new Uint8Array(16), s = '';
    crypto.getRandomValues(a);
    for (var i = 0; i < a.length; i++) s += (a[i] + 256).toString(16).slice(1);
    d.cookie = 'mq_uid=' + s + '; max-age=31536000; path=/; SameSite=Lax' + (location.protocol === 'https:' ? '; Secure' : '');
    return s;
  }

  // viewable fires url once el has been in view by MRC's rule: at least 50% of
  // its pixels (30% for ads of 242,500 pixels or more) for 1 continuous second
  // (2 for video, while it plays), and only while the page is visible.
  function viewable(e, url, area, video) {
    if (!IO || !url) return;
    var need = area >= 242500 ? 0.3 : 0.5, ms = video ? 2000 : 1000, ratio = 0, timer = 0, io;
    function check() {
      var on = ratio >= need && d.visibilityState === 'visible' && (!video || !(video.paused || video.ended));
      if (on && !timer) timer = setTimeout(done, ms);
      if (!on && timer) timer = clearTimeout(timer) || 0;
    }
    function done() {
      ping(url);
      io.disconnect();
      d.removeEventListener('visibilitychange', check);
    }
    io = new IO(function (es) { ratio = es[es.length - 1].intersectionRatio; check(); }, { threshold: [0, 0.25, 0.3, 0.5, 0.75, 1] });
    io.observe(e);
    d.addEventListener('visibilitychange', check);
    if (video) ['playing', 'pause', 'ended'].forEach(function (t) { video.addEventListener(t, check); });
  }

  // render adds one chosen ad to slot and reports it once it has rendered.
  function render(slot, ch) {
    var c = ch.creative || {}, box = el('div', { 'class': 'mq-ad', 'data-ad-id': ch.adId }, slot), shown, media;
    var wide = c.width && c.height ? c.width * c.height : 0;
    function rendered(target) {
      if (shown) return;
      shown = 1;
      var imp = ch.impressionUrl + (IO ? '?m=1' : '');
      if (!ch.proofUrl) ping(imp);
      else fetch(ch.proofUrl, { credentials: 'omit', cache: 'no-store' }).then(function (r) { return r.ok ? r.text() : ''; }, function () { return ''; })
        .then(function (p) { ping(imp + (IO ? '&' : '?') + 'rp=' + encodeURIComponent(p)); }); // the placement asks for a render proof (docs/ivt.md)
      (ch.impressionTrackers || []).forEach(ping); // third parties', once with the impression
      if (target) viewable(target, ch.viewUrl, wide || target.offsetWidth * target.offsetHeight, c.type === 'video' && target);
    }
    function clicked() { (ch.clickTrackers || []).forEach(ping); }
    if (ch.bidder) { // a header-bidding bid: Prebid draws it (the glue)
      w.marqueePrebid.render(box, ch, opt).then(rendered, function () { box.remove(); });
      return;
    }
    function link(parent) {
      if (!ch.clickUrl) return parent;
      var a = el('a', { href: ch.clickUrl, target: '_blank', rel: 'noopener' }, parent);
      a.addEventListener('click', clicked);
      return a;
    }
    switch (c.type) {
      case 'image':
        media = el('img', { src: asset(c.image), width: c.width, height: c.height, alt: '' }, link(box));
        media.style.display = 'block'; // no line box below it: the slot keeps its reserved height
        media.addEventListener('load', function () { rendered(media); });
        break;
      case 'html':
      case 'tag':
        // A trusted tag: a friendly frame of the page's origin (its HTML
        // written in); else the sandboxed frame of the ad server's.
        media = ch.tagHtml ? frame(box, c.width, c.height, ch.tagHtml) : el('iframe', { src: ch.frameUrl, width: c.width, height: c.height,
          sandbox: 'allow-scripts allow-popups', scrolling: 'no', title: 'Advertisement', referrerpolicy: 'no-referrer' }, box);
        media.style.border = '0'; // CSSOM, not a style attribute: a strict CSP allows it
        media.style.display = 'block';
        media.addEventListener('load', function () {
          rendered(media);
          try { media.contentDocument.addEventListener('click', clicked, { once: true }); } catch (e) {} // a sandboxed frame fires its own
        });
        break;
      case 'native':
        box.className += ' mq-native';
        var a = link(box);
        if (c.imageUrl) el('img', { src: asset(c.imageUrl), alt: '', 'class': 'mq-image' }, a);
        text('strong', 'mq-title', c.title, a);
        text('p', 'mq-body', c.body, a);
        text('span', 'mq-cta', c.cta, a);
        text('small', 'mq-sponsor', c.sponsoredBy, box);
        rendered(box);
        break;
      case 'video':
        media = el('video', { src: c.mediaUrl, width: c.width, height: c.height, preload: 'auto' }, box);
        media.muted = media.playsInline = true;
        media.autoplay = true;
        if (ch.clickUrl) media.addEventListener('click', function () { w.open(ch.clickUrl, '_blank', 'noopener'); });
        media.addEventListener('loadeddata', function () { rendered(media); });
        break;
      default:
        box.remove(); // an ad without a creative has nothing to show
    }
  }

  // frame is a friendly frame (no sandbox: the page's origin) in parent
  // holding html: a trusted tag, or the publisher's own passback.
  function frame(parent, wd, ht, html) {
    var f = el('iframe', { width: wd, height: ht, scrolling: 'no', title: 'Advertisement' }, parent);
    f.srcdoc = html;
    return f;
  }

  function empty(slot) {
    slot.setAttribute('data-marquee-state', 'empty');
    if (slot.hasAttribute('data-marquee-collapse')) slot.style.display = 'none';
  }

  // fill asks one decision for the slots (elements with
  // data-marquee-placement) and renders what it chooses.
  // reserve gives a slot its placement's size (data-marquee-size="300x250")
  // before anything fills it, so that the ad shifts nothing on the page.
  function reserve(s) {
    var m = /^(\d+)x(\d+)$/.exec(s.dataset.marqueeSize || '');
    if (m && !s.style.minHeight) s.style.minHeight = m[2] + 'px';
  }

  // rotate refreshes a filled slot with data-marquee-refresh="N" once it
  // has been in view (half of it, the page visible) for N seconds, at most
  // data-marquee-refresh-max times (1 by default); never while hidden.
  function rotate(s) {
    var every = +s.dataset.marqueeRefresh, most = +s.dataset.marqueeRefreshMax || 1, ratio = 0, seen = 0;
    if (!IO || !(every > 0) || (s.mqRefreshed || 0) >= most) return;
    var io = new IO(function (es) { ratio = es[es.length - 1].intersectionRatio; }, { threshold: [0, 0.5, 1] });
    io.observe(s);
    var t = setInterval(function () {
      if (ratio >= 0.5 && d.visibilityState === 'visible' && ++seen >= every) {
        clearInterval(t);
        io.disconnect();
        s.mqRefreshed = (s.mqRefreshed || 0) + 1;
        fill([s]);
      }
    }, 1000);
    s.mqStop = function () { clearInterval(t); io.disconnect(); };
  }

  function fill(slots) {
    var byDiv = {}, req = { placements: [], url: location.origin + location.pathname }; // no query or fragment: they may hold a visitor's tokens
    slots.forEach(function (s) {
      reserve(s);
      if (s.mqStop) s.mqStop();
      if (!s.id) s.id = 'mq-slot-' + (++n);
      s.setAttribute('data-marquee-state', 'loading');
      byDiv[s.id] = s;
      var p = { div: s.id, placement: s.getAttribute('data-marquee-placement') }, skv = kv(s.dataset.marqueeKv);
      if (s.dataset.marqueeCount) p.count = +s.dataset.marqueeCount;
      if (skv) p.kv = skv; // the slot's key-values (its keys replace the page's)
      req.placements.push(p);
    });
    if (!req.placements.length) return Promise.resolve();
    if (Object.keys(pageKV).length) req.kv = pageKV;
    try { if (d.referrer) req.referrer = new URL(d.referrer).origin + '/'; } catch (e) {} // the referring site, not its path
    if (navigator.webdriver) req.webdriver = true; // a browser under automation: invalid traffic (docs/ivt.md)
    if (opt.keywords) req.keywords = opt.keywords.split(',');
    if (opt.age) req.age = +opt.age;
    ['gender', 'country', 'platform'].forEach(function (k) { if (opt[k]) req[k] = opt[k]; });
    return Promise.all([tcf(), glue.then(function (P) { return P && P.bids(slots, opt, origin); }), gpp()]).then(function (r) {
      var c = r[0], g = r[2];
      if (g) (c = c || {}).gpp = g.gpp, c.gppSid = g.gppSid;
      var key = userKey(c);
      req.placements.forEach(function (p) { if (r[1] && r[1][p.div]) p.bids = r[1][p.div]; });
      if (key) req.user = { key: key };
      if (opt.consent === '1') (c = c || {}).given = true; // the publisher's own consent
      if (c) req.consent = c;
      // A body without a content type: a simple request, no preflight.
      return fetch(origin + '/api/v1/decisions', { method: 'POST', body: new Blob([JSON.stringify(req)]), credentials: 'omit' });
    })
      .then(function (r) { if (!r.ok) throw new Error('decision: ' + r.status); return r.json(); })
      .then(function (res) {
        for (var div in byDiv) {
          var s = byDiv[div], chosen = (res.decisions || {})[div] || [];
          s.textContent = '';
          chosen.forEach(function (ch) { render(s, ch); });
          var pb = !chosen.length && (res.passbacks || {})[div]; // the placement's own fallback tag
          if (pb) frame(s, pb.width, pb.height, pb.html).style.border = '0';
          if (chosen.length || pb) s.setAttribute('data-marquee-state', chosen.length ? 'filled' : 'passback'); else empty(s);
          if (chosen.length) rotate(s);
        }
      })
      .catch(function () { for (var div in byDiv) empty(byDiv[div]); });
  }

  function unfilled(all) {
    return Array.prototype.filter.call(d.querySelectorAll('[data-marquee-placement]'), function (s) {
      return all || !s.hasAttribute('data-marquee-state');
    });
  }

  // lazy fills slots as they come within data-lazy pixels of the viewport
  // (the ones that come near together in one decision); without it, at
  // once.
  var near = IO && opt.lazy ? new IO(function (es) {
    var now = es.filter(function (e) { return e.isIntersecting; }).map(function (e) { near.unobserve(e.target); return e.target; });
    if (now.length) fill(now);
  }, { rootMargin: (+opt.lazy || 0) + 'px 0px' }) : null;
  function start(slots) {
    slots.forEach(reserve);
    if (!near) return fill(slots);
    slots.forEach(function (s) { s.setAttribute('data-marquee-state', 'waiting'); near.observe(s); });
    return Promise.resolve();
  }

  w.marquee = {
    // refresh decides again: the slots given (elements), every slot (true),
    // or (none) those not filled yet.
    refresh: function (x) { return fill(x && x.length !== undefined ? Array.prototype.slice.call(x) : unfilled(x)); },
    // fill fills one slot element (again, if it was).
    fill: function (e) { return fill([e]); },
    // set changes the page's key-values for the decisions after it: a key
    // set to null or undefined is removed.
    set: function (o) {
      for (var k in o) { if (o[k] == null) delete pageKV[k]; else pageKV[k] = o[k]; }
    }
  };
  // A single-page app (data-spa): a new page (history.pushState, the back
  // button) decides every slot again, and slots added later are filled.
  if (opt.spa) {
    var push = history.pushState, again = function () { setTimeout(function () { fill(unfilled(true)); }, 0); };
    history.pushState = function () { push.apply(history, arguments); again(); };
    w.addEventListener('popstate', again);
    new MutationObserver(function () { var n = unfilled(); if (n.length) start(n); }).observe(d.body || d.documentElement, { childList: true, subtree: true });
  }
  var go = function () { start(unfilled()); };
  if (d.readyState === 'loading') d.addEventListener('DOMContentLoaded', go);
  else go();
})(window, document);
