// Reads Marquee's answers as players do, with Dailymotion's libraries
// (cmd/marquee/players_test.go runs it): prints JSON on stdout.
//
//   node players.mjs vast URL   VASTClient.get: follows wrappers to the inline ad
//   node players.mjs vmap URL   VMAP: the document's ad breaks
import { VASTClient } from '@dailymotion/vast-client';
import VMAP from '@dailymotion/vmap';
import { DOMParser } from '@xmldom/xmldom';

// A person's browser asks for ads: the User-Agent of one (PLAYER_UA), as
// a web player's requests carry (a bare Node client is invalid traffic).
const ua = process.env.PLAYER_UA;
if (ua) {
  const plain = globalThis.fetch;
  globalThis.fetch = (input, init = {}) => plain(input, { ...init, headers: { ...(init.headers || {}), 'User-Agent': ua } });
}

const [what, url] = process.argv.slice(2);
if (what === 'vast') {
  const res = await new VASTClient().get(url, { wrapperLimit: 5 });
  const ads = res.ads.map(ad => ({
    system: ad.system && ad.system.value,
    title: ad.title,
    sequence: ad.sequence,
    impressions: ad.impressionURLTemplates.map(u => u.url),
    errors: ad.errorURLTemplates,
    creatives: ad.creatives.map(c => ({
      type: c.type,
      skipDelay: c.skipDelay,
      duration: c.duration,
      universalAdIds: c.universalAdIds,
      media: (c.mediaFiles || []).map(m => ({ url: m.fileURL, mimeType: m.mimeType, width: m.width, height: m.height })),
      tracking: c.trackingEvents,
      clickThrough: c.videoClickThroughURLTemplate && c.videoClickThroughURLTemplate.url,
      clickTracking: (c.videoClickTrackingURLTemplates || []).map(u => u.url),
    })),
    verifications: (ad.adVerifications || []).map(v => ({ vendor: v.vendor, resource: v.resource, apiFramework: v.apiFramework, parameters: v.parameters })),
  }));
  process.stdout.write(JSON.stringify({ ads }));
} else if (what === 'vmap') {
  const body = await (await fetch(url)).text();
  const vmap = new VMAP(new DOMParser().parseFromString(body, 'text/xml'));
  process.stdout.write(JSON.stringify({
    version: vmap.version,
    breaks: vmap.adBreaks.map(b => ({ timeOffset: b.timeOffset, breakType: b.breakType, breakId: b.breakId, adTagURI: b.adSource && b.adSource.adTagURI })),
  }));
} else {
  console.error('usage: node players.mjs vast|vmap URL');
  process.exit(2);
}
