// Makes the privacy test vectors: GPP strings encoded by the IAB's
// @iabgpp/cmpapi (GppModel) and TCF v2 strings by the IAB's @iabtcf/core,
// each with what docs/privacy.md's table says a request carrying it may
// do. The strings come from the authors of the standards, not from
// Marquee's code; the expectations are the policy's. Run
//   npm ci && node make.mjs > ../vectors.json
import { GppModel } from '@iabgpp/cmpapi';
import { TCModel, TCString, GVL } from '@iabtcf/core';

const purposes = {};
for (let i = 1; i <= 11; i++) purposes[i] = { id: i, name: 'p' + i, description: '', illustrations: [] };
const specialFeatures = { 1: { id: 1, name: 'precise geolocation', description: '', illustrations: [] }, 2: { id: 2, name: 'device scan', description: '', illustrations: [] } };
const gvl = new GVL({ gvlSpecificationVersion: 3, vendorListVersion: 150, tcfPolicyVersion: 4, lastUpdated: '2026-11-01T00:00:00Z',
  purposes, specialPurposes: {}, features: {}, specialFeatures, stacks: {}, dataCategories: {},
  vendors: { 42: { id: 42, name: 'a vendor', purposes: [1, 2, 3, 4, 7], legIntPurposes: [], flexiblePurposes: [], specialPurposes: [], features: [], specialFeatures: [1], policyUrl: '' } } });

// tcf encodes a TC string with these purposes consented to, these
// purposes' legitimate interest established, these special features
// opted in to, and vendor 42's consent when vendor.
function tcf({ consents = [], li = [], sf = [], vendor = false }) {
  const m = new TCModel(gvl);
  m.cmpId = 7; m.cmpVersion = 1; m.publisherCountryCode = 'FR'; m.isServiceSpecific = true;
  m.created = new Date('2026-11-01T00:00:00Z'); m.lastUpdated = m.created;
  consents.forEach(p => m.purposeConsents.set(p));
  li.forEach(p => m.purposeLegitimateInterests.set(p));
  sf.forEach(f => m.specialFeatureOptins.set(f));
  if (vendor) m.vendorConsents.set(42);
  return TCString.encode(m);
}

// gpp encodes a GPP string from [section, field, value] triples.
function gpp(fields) {
  const m = new GppModel();
  for (const [sec, f, v] of fields) m.setFieldValue(sec, f, v);
  return m.encode();
}

const USER = ['userKey', 'personalise', 'measure', 'attribute', 'transmitUserId', 'transmitPreciseGeo', 'transmitIp', 'syncUser'];
const US_OPT_OUT = ['personalise', 'attribute', 'transmitUserId', 'transmitPreciseGeo', 'transmitIp', 'syncUser'];
const GEO = ['transmitPreciseGeo', 'transmitIp'];
const out = [];
const add = (name, req, limit, denied) => out.push({ name, ...req, want: { limit, denied: [...new Set(denied)].sort() } });

// TCF, GDPR applying.
add('tcf: purpose 1 only', { gdpr: 1, tcf: tcf({ consents: [1] }) }, '', ['personalise', 'transmitUserId', 'syncUser', 'measure', 'attribute', ...GEO]);
add('tcf: purposes 1 and 2', { gdpr: 1, tcf: tcf({ consents: [1, 2] }) }, '', ['personalise', 'transmitUserId', 'syncUser', 'measure', 'attribute', ...GEO]);
add('tcf: purposes 1 to 4', { gdpr: 1, tcf: tcf({ consents: [1, 2, 3, 4] }) }, '', ['measure', 'attribute', ...GEO]);
add('tcf: purposes 1 to 4, 7 by legitimate interest', { gdpr: 1, tcf: tcf({ consents: [1, 2, 3, 4], li: [7] }) }, '', GEO);
add('tcf: purposes 1 to 4 and 7, precise geolocation', { gdpr: 1, tcf: tcf({ consents: [1, 2, 3, 4, 7], sf: [1] }) }, '', []);
add('tcf: no purpose 1', { gdpr: 1, tcf: tcf({ consents: [2, 3, 4, 7], sf: [1] }) }, 'tcf', USER);
add('tcf: no string', { gdpr: 1 }, 'tcf', USER);
add('tcf: malformed', { gdpr: 1, tcf: 'CQtAQoA!!not-a-string' }, 'tcf', USER);
add('tcf: GDPR does not apply', { gdpr: 0, tcf: tcf({ consents: [] }) }, '', []);

// GPP's US sections: the opt-outs set (1) and not set (2).
const sections = {
  usnat: ['SaleOptOut', 'SharingOptOut', 'TargetedAdvertisingOptOut'],
  usca: ['SaleOptOut', 'SharingOptOut'],
  usva: ['SaleOptOut', 'TargetedAdvertisingOptOut'],
  usco: ['SaleOptOut', 'TargetedAdvertisingOptOut'],
  usut: ['SaleOptOut', 'TargetedAdvertisingOptOut'],
  usct: ['SaleOptOut', 'TargetedAdvertisingOptOut'],
};
for (const [sec, optOuts] of Object.entries(sections)) {
  const none = gpp(optOuts.map(f => [sec, f, 2]));
  add(`gpp ${sec}: no opt-out`, { gpp: none }, '', []);
  for (const f of optOuts) {
    add(`gpp ${sec}: ${f}`, { gpp: gpp(optOuts.map(g => [sec, g, g === f ? 1 : 2])) }, '', US_OPT_OUT);
  }
}
add('gpp usnat: GPC subsection', { gpp: gpp([['usnat', 'SaleOptOut', 2], ['usnat', 'Gpc', true], ['usnat', 'GpcSegmentIncluded', true]]) }, '', US_OPT_OUT);
add('gpp usnat: precise geolocation not to be processed', { gpp: gpp([['usnat', 'SaleOptOut', 2], ['usnat', 'SensitiveDataProcessing', [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]]]) }, '', GEO);
add('gpp usca: a section that does not apply (gppSid 7)', { gpp: gpp([['usca', 'SaleOptOut', 1]]), gppSid: '7' }, '', []);
add('gpp usca: applying (gppSid 8)', { gpp: gpp([['usca', 'SaleOptOut', 1]]), gppSid: '8' }, '', US_OPT_OUT);

// GPP and TCF on one request: GDPR applies through GPP's TCF section,
// and a US section opts out.
{
  const t = tcf({ consents: [1, 2, 3, 4, 7], sf: [1] });
  const m = new GppModel();
  m.decodeSection('tcfeuv2', t);
  m.setFieldValue('usnat', 'SaleOptOut', 1);
  add('gpp: tcfeuv2 and usnat on one request', { gpp: m.encode(), gppSid: '2,7' }, '', US_OPT_OUT);
  add('gpp: tcfeuv2 only, purposes 1 to 4 and 7', { gpp: m.encode(), gppSid: '2' }, '', []);
  add('tcf and a gpp usnat opt-out on one request', { gdpr: 1, tcf: tcf({ consents: [1] }), gpp: gpp([['usnat', 'SaleOptOut', 1]]) }, '', ['measure', 'attribute', ...US_OPT_OUT]);
}

// US Privacy strings, GPC, COPPA, malformed GPP.
add('usp: opted out of sale', { usp: '1YYN' }, '', US_OPT_OUT);
add('usp: not opted out', { usp: '1YNN' }, '', []);
add('usp: malformed', { usp: '1Y' }, '', US_OPT_OUT);
add('gpc', { gpc: true }, '', US_OPT_OUT);
add('coppa', { child: true }, 'coppa', USER);
add('coppa, with consent given', { child: true, gdpr: 1, tcf: tcf({ consents: [1, 2, 3, 4, 7], sf: [1] }) }, 'coppa', USER);
add('gpp: malformed', { gpp: 'DBABLA~not!base64' }, 'malformed', USER);
add('gpp: malformed gppSid', { gpp: gpp([['usnat', 'SaleOptOut', 2]]), gppSid: 'seven' }, 'malformed', USER);
add('nothing said', {}, '', []);

console.log(JSON.stringify(out, null, 1));
