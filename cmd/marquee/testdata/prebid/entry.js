// Prebid.js as a publisher builds it (v10+: the npm package, imported as
// modules): two bidders' adapters, the floors module, the debugging
// module, which the test configures to answer the bidders' requests with
// mocked bids — no network — and the Prebid Server adapter, which calls
// Marquee as its Prebid Server (TestStockPrebidCallsMarqueeAsPrebidServer).
import pbjs from 'prebid.js';
import 'prebid.js/modules/appnexusBidAdapter';
import 'prebid.js/modules/rubiconBidAdapter';
import 'prebid.js/modules/priceFloors';
import 'prebid.js/modules/debugging';
import 'prebid.js/modules/prebidServerBidAdapter';

pbjs.processQueue();
