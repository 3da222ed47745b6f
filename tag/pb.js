/* Marquee's Prebid.js glue (docs/tag.md#header-bidding). The tag (t.js)
 * loads it only on pages whose tag says data-prebid, beside the page's own
 * Prebid.js (v10+). Before each decision it runs the page's Prebid auction
 * for the slots — each placement's floor offered to Prebid's floors module
 * — and hands each slot's bids to the one decision, where they compete
 * with the campaigns; a bid that wins is drawn in a frame of another origin
 * than the page's, through Prebid's cross-origin rendering (as Prebid's
 * Universal Creative does), and the tag counts it as any ad. No dependency, no
 * build step. */
(function (w, d) {
  'use strict';
  var floors = {}; // ad unit code → floor (CPM), of every slot seen so far

  // A slot's Prebid ad unit: its data-prebid-code, else its element's id.
  function code(s) { return s.dataset.prebidCode || s.id; }
  function pbjs(opt) { return w[opt.prebidGlobal || 'pbjs']; }

  // best keeps of a slot's Prebid bids what the decision weighs: each
  // bidder's highest open-auction bid and every deal's, highest first, at
  // most 20, in the decision's terms (bidder, cpm, currency, adId, size,
  // dealId); a bid the decision would refuse (a bidder's code it does not
  // take, a CPM out of bounds, no ad id) is left out, not the decision.
  function best(bids) {
    var top = {}, out = [];
    (bids || []).forEach(function (b) {
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(b.bidderCode || '') || !b.adId || !(b.cpm >= 0 && b.cpm <= 10000)) return;
      var m = { bidder: b.bidderCode, cpm: b.cpm, adId: String(b.adId) };
      if (/^[A-Z]{3}$/.test(b.currency || '')) m.currency = b.currency;
      if (b.width > 0 && b.height > 0) m.size = b.width + 'x' + b.height;
      if (b.dealId) { m.dealId = String(b.dealId).slice(0, 128); out.push(m); } else if (!top[m.bidder] || top[m.bidder].cpm < m.cpm) top[m.bidder] = m;
    });
    for (var k in top) out.push(top[k]);
    return out.sort(function (a, b) { return b.cpm - a.cpm; }).slice(0, 20);
  }

  function ping(url) {
    try { fetch(url, { mode: 'no-cors', credentials: 'omit', keepalive: true, cache: 'no-store' }).catch(function () {}); } catch (e) { (new Image()).src = url; }
  }

  w.marqueePrebid = {
    // bids runs the page's Prebid auction for slots (elements), with the
    // tag's data-prebid as its timeout in ms (1000 when empty), and
    // answers each slot's bids by the slot's id: {} when the page has no
    // Prebid or it does not answer within the timeout and a second.
    bids: function (slots, opt, origin) {
      var pb = pbjs(opt), ms = +opt.prebid || 1000, names = [];
      if (!pb) return Promise.resolve({});
      pb.que = pb.que || [];
      slots.forEach(function (s) { var p = s.dataset.marqueePlacement; if (names.indexOf(p) < 0) names.push(p); });
      return fetch(origin + '/api/v1/floors?placements=' + encodeURIComponent(names.join(',')), { credentials: 'omit' })
        .then(function (r) { return r.ok ? r.json() : null; })
        .catch(function () { return null; })
        .then(function (f) {
          return new Promise(function (done) {
            var late = setTimeout(done, ms + 1000, {});
            pb.que.push(function () {
              if (f && f.floors) {
                slots.forEach(function (s) { var v = f.floors[s.dataset.marqueePlacement]; if (v) floors[code(s)] = v; });
                // Prebid's floors module (when the page's build has it)
                // refuses bids under them before the decision does.
                if (Object.keys(floors).length) pb.setConfig({ floors: { data: { currency: f.currency, schema: { fields: ['adUnitCode'] }, values: floors } } });
              }
              // The supply chain: the network's node after the page's own
              // (a wrapper's upstream schain is kept), once.
              if (f && f.schain) {
                var src = (pb.getConfig('ortb2') || {}).source || {}, up = src.schain || (src.ext && src.ext.schain), me = f.schain.nodes[0];
                var has = up && up.nodes && up.nodes.some(function (n) { return n.asi === me.asi && n.sid === me.sid; });
                if (!has) pb.mergeConfig({ ortb2: { source: { schain: up && up.nodes ? { ver: up.ver || '1.0', complete: up.complete, nodes: up.nodes.concat([me]) } : f.schain } } });
              }
              pb.requestBids({
                adUnitCodes: slots.map(code), timeout: ms, bidsBackHandler: function (res) {
                  clearTimeout(late);
                  var out = {};
                  slots.forEach(function (s) { var b = best(res && res[code(s)] && res[code(s)].bids); if (b.length) out[s.id] = b; });
                  done(out);
                }
              });
            });
          });
        })
        .catch(function () { return {}; });
    },

    // render draws the bid a decision chose (ch) in box, in a frame of the
    // bid's size and of another origin than the page's — Marquee's bid
    // frame (ch.frameUrl: on the creative origin when there is one),
    // sandboxed without allow-same-origin, which asks Prebid for the bid's
    // markup over Prebid's cross-origin protocol (as Prebid's Universal
    // Creative does) — and answers the frame once Prebid says the ad
    // rendered (it rejects if it could not). The bid can neither script
    // nor navigate the page. A click in it (the window losing focus to
    // the frame) fires the decision's click URL, once.
    render: function (box, ch, opt) {
      var pb = pbjs(opt), m = /^(\d+)x(\d+)$/.exec(ch.size || '') || [], f = d.createElement('iframe');
      f.setAttribute('sandbox', 'allow-scripts allow-popups');
      f.setAttribute('scrolling', 'no');
      f.setAttribute('title', 'Advertisement');
      if (m[1]) { f.width = m[1]; f.height = m[2]; }
      f.style.border = '0';
      f.style.display = 'block';
      box.appendChild(f);
      return new Promise(function (ok, fail) {
        function off() {
          pb.offEvent('adRenderSucceeded', done);
          pb.offEvent('adRenderFailed', failed);
        }
        function failed(e) {
          if (e.adId !== ch.adId) return;
          off();
          fail(new Error(e.reason || 'Prebid could not render the bid'));
        }
        function done(e) {
          if (e.adId !== ch.adId) return;
          off();
          w.addEventListener('blur', function click() {
            setTimeout(function () {
              if (d.activeElement !== f) return;
              w.removeEventListener('blur', click);
              ping(ch.clickUrl);
            }, 0);
          });
          ok(f);
        }
        pb.onEvent('adRenderSucceeded', done);
        pb.onEvent('adRenderFailed', failed);
        f.src = ch.frameUrl + '#' + encodeURIComponent(ch.adId);
      });
    }
  };
})(window, document);
