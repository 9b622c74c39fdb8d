package invoicing_test

import "github.com/kadens/kadens/internal/invoicing"

// issuePeriods is what BenchmarkIssuePeriods measures.
var issuePeriods = invoicing.IssuePeriods
