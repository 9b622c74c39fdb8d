// Runs every OData query option against a Kadens analytics API with real
// client libraries: odata-query builds each URL, @odata/client sends it,
// parses the answer and follows @odata.nextLink. Prints one JSON object:
// case name → {url, pages: [parsed response bodies]}. The Go test
// (internal/analytics/clients_test.go) checks the results.
//
//   node run.js SERVICE_ROOT TOKEN TENANT
"use strict";
const buildQuery = require("odata-query").default;
const { OData } = require("@odata/client");

const [root, token, tenant] = process.argv.slice(2);
const serviceRoot = root.endsWith("/") ? root : root + "/";

function client(extraHeaders) {
  return OData.New4({
    serviceEndpoint: serviceRoot,
    commonHeaders: { Authorization: "Bearer " + token, "S4-TenantId": tenant, ...extraHeaders },
  });
}

const raw = (value) => ({ type: "raw", value });

// name → [entity set path, odata-query options, extra headers]
const cases = {
  andInNot: ["Subscribers", {
    filter: { and: [{ Country: { in: ["NO", "SE"] } }, { not: { Name: { startswith: "Ola" } } }] },
    orderBy: ["Country desc", "Name asc"], select: ["Name", "Country"],
  }],
  orContainsTolowerEndswith: ["Subscribers", {
    filter: { or: [{ "tolower(Name)": { contains: "nordmann" } }, { Email: { endswith: ".dk" } }] },
    orderBy: "Name", select: ["Name"],
  }],
  dateFunctions: ["Subscribers", {
    filter: { "year(CreatedAt)": { ge: 2000 }, "month(CreatedAt)": { ge: 1 }, "day(CreatedAt)": { le: 31 },
      "date(CreatedAt)": { ge: raw("2000-01-01") } },
    count: true, top: 2, orderBy: "Name",
  }],
  nullComparison: ["Subscribers", { filter: { ExternalId: null }, count: true, select: ["Id"] }],
  quoteInLiteral: ["Subscribers", { filter: { Name: "O'Brien" }, select: ["Name", "Email"] }],
  topSkip: ["Subscribers", { orderBy: "Name", skip: 1, top: 2, select: ["Name"] }],
  expandNested: ["Subscribers", {
    filter: { Name: "Billy" }, select: ["Name"],
    expand: { Subscriptions: { select: ["Id", "PeriodStart"], orderBy: "PeriodStart desc", top: 10,
      filter: { PeriodIndex: { ge: 0 } }, expand: { Invoices: { select: ["Id", "Gross"] } } } },
  }],
  countPath: ["Subscribers", { count: { Country: "NO" } }],
  applyGroupBy: ["Subscribers", { transform: [{ groupBy: { properties: ["Country"],
    transform: { aggregate: { SubscriberNumber: { with: "max", as: "Highest" } } } } }] }],
  applyAggregate: ["Payments", { transform: { aggregate: { Amount: { with: "sum", as: "Total" } } } }],
  paging: ["Subscribers", { orderBy: "Name", select: ["Name"] }, { Prefer: "odata.maxpagesize=2" }],
};

async function main() {
  const out = {};
  for (const [name, [set, options, headers]] of Object.entries(cases)) {
    const c = client(headers || {});
    const url = set + buildQuery(options);
    const pages = [];
    let next = url;
    while (next) {
      const body = await c.newRequest({ collection: next, method: "GET" });
      pages.push(body);
      if (pages.length > 50) throw new Error(name + ": more than 50 pages");
      const link = body && typeof body === "object" ? body["@odata.nextLink"] : undefined;
      // nextLinks are absolute (the public address); the client is given
      // the part after the service root.
      next = link ? link.slice(link.indexOf("/analytics/") + "/analytics/".length) : undefined;
    }
    out[name] = { url, pages };
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + "\n");
  process.exit(1);
});
