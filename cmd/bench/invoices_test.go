package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The invoices suite runs and reports both loops and their ratio.
func TestInvoiceBenchReports(t *testing.T) {
	report, err := runInvoiceBench(200 * time.Millisecond)
	require.NoError(t, err)
	require.Contains(t, report, "Ratio ")
	t.Log(report)
	require.True(t, strings.Contains(report, "meets") || strings.Contains(report, "misses"))
}
