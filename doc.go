// Package marquee holds Marquee's vocabulary: ads and their targeting
// conditions and trees (targetingtree.go), links, events, the store's changelog, how input is
// validated, and the kinds of error every other package returns and the
// HTTP edge maps to statuses (errors.go). It imports only the standard
// library.
//
// The mechanisms live in sub-packages, each named for what it provides:
//
//   - index: the in-memory ad index that answers GET /api/v1/ad
//   - feed: tails the store's changelog and hands each batch of changes to
//     the views in memory (marquee.Applier: the index, the delivery plan,
//     the caches, access, webhooks, the counters)
//   - targeting: the targeting rule — conditions, trees (key-values,
//     context, geo, device, day-parts) and viewers compiled once, filters
//     that index many trees; targeting/targetingtest: its brute-force
//     reference
//   - delivery: decisions over an immutable plan of campaigns, placements
//     and their ads; counters: frequency caps' and money's counts (memory,
//     Redis); attribution: what earned a conversion
//   - serve: the serving and money rules without HTTP — Decide, Track,
//     Convert — and the one Ledger every decision and event leaves its
//     counts and spend in; billing: invoices and credit notes from what
//     it billed; payments: card top-ups of prepaid balances through
//     Stripe; demand: server-side demand, the OpenRTB partners a
//     decision asks for bids
//   - ivt: invalid traffic told from people's (crawlers, previewers,
//     headless browsers, data centres, behaviour); third_party/ivtlists:
//     the maintained lists it reads; third_party/ipdata: the vendored
//     IP-to-country database and hosting networks' ranges (made by
//     third_party/ipdata/internal/gen)
//   - supply: what buyers verify the network's inventory by — its
//     sellers.json and its publishers' ads.txt lines
//   - forecast: inventory forecasts and delivery risk
//   - clickhouse: every event in ClickHouse and reports answered from it
//   - reportmail: saved reports emailed on their schedules
//   - macro: the macros of third-party tags and trackers
//   - tracking: the signed tracking URL; vast: the VAST document; tag: the
//     ad tag's script
//   - privacy: what events keep of visitors, consent, pseudonyms
//   - geoip: where a visitor's address is (a MaxMind database)
//   - streams (streams/kafka, streams/natsjs): events forwarded to brokers;
//     webhooks: events POSTed to receivers
//   - linkcsv: links as CSV; linkroute: where a short link sends a visitor
//   - asset: what an uploaded image is
//   - cache: the bounded W-TinyLFU cache of links and ads by key
//   - clicks: counts redirects in memory and flushes them to the store
//   - eventline: the event line's format, written (serve, web) and read
//     (reports)
//   - collector: event shards, compressed files, rotation and shipping
//   - objstore: where finished event files go (S3-compatible storage)
//   - auth: who a request is (the bootstrap token, API keys, sessions)
//   - reports: counts events from the files and answers reports;
//     reportrow: the rows they are stored as, which the stores use
//   - store: the contract every store meets (store.Store)
//   - store/sqlite, store/postgres, store/mysql: the three stores (driver
//     adapters and dialects)
//   - store/sqltx: the store logic all three are written once over, with
//     the migrations and their runner; store/adrow: the ad row they keep;
//     store/storetest: the conformance suite they pass
//   - jsonstr: the byte-level JSON string escaper of the hot paths
//   - test helpers beside the packages they serve: privacy/privacytest (TCF
//     strings), geoip/geoiptest (MaxMind files), counters/counterstest
//     (the counters' contract), store/postgres/pgtest, store/mysql/mysqltest
//     and clickhouse/clickhousetest (a schema or database of a test's own)
//   - web: the HTTP edge (fasthttp): reads requests, authenticates, calls
//     serve, writes bytes; routes.go lists every route
//   - console: the web console's files, embedded and served at /admin/
//   - loadgen: the engine of `marquee bench`; loadgen/plot: its charts,
//     drawn by cmd/marquee-plot (apart, so the server links no charting
//     library)
//   - tmpfs: small RAM filesystems for the full-disk tests (root only)
//   - fixture: the generated catalog `marquee seed` writes and benchmarks address
//   - cmd/marquee: the binary that parses flags and wires the rest
//
// docs/architecture.md draws how they fit together; docs/api.md is the
// contract of every route.
package marquee
