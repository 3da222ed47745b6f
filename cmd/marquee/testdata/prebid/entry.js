// Prebid.js as a publisher builds it (v10+: the npm package, imported as
// modules): two bidders' adapters, the floors module, and the debugging
// module, which the test configures to answer the bidders' requests with
// mocked bids — no network.
import pbjs from 'prebid.js';
import 'prebid.js/modules/appnexusBidAdapter';
import 'prebid.js/modules/rubiconBidAdapter';
import 'prebid.js/modules/priceFloors';
import 'prebid.js/modules/debugging';

pbjs.processQueue();
