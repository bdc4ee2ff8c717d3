package storage_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Place names match after §15's normalisation.
func TestNormalizeAreaName(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"الجيزه", "الجيزة"},
		{"  الإسكندرية ", "الاسكندريه"},
		{"أسوان", "اسوان"},
		{"آمون", "امون"},
		{"بنى سويف", "بني سويف"},
		{"القاهـــرة", "القاهرة"},
		{"مَصْر", "مصر"},
		{"Giza", "GIZA"},
		{"Sharm  El Sheikh", "sharm el sheikh"},
		{"６ October", "6 october"},
	} {
		require.Equal(t, storage.NormalizeAreaName(c.a), storage.NormalizeAreaName(c.b), "%q ~ %q", c.a, c.b)
	}
	require.NotEqual(t, storage.NormalizeAreaName("Giza"), storage.NormalizeAreaName("الجيزة"), "other spellings are listed, not guessed")
}

// The options a cart gets: bands by weight, each started kilogram past
// the last, free above the (discounted) subtotal, COD rules, cheapest first.
func TestRateOptions(t *testing.T) {
	amount := func(v int64) *int64 { return &v }
	flat := storage.ShippingRate{ID: uuid.New(), Name: "flat", Price: 6000, CODAvailable: true, CODFee: 1500, Position: 1}
	banded := storage.ShippingRate{ID: uuid.New(), Name: "banded", Price: 0, CODAvailable: true, CODFee: 500, Position: 0,
		WeightBands: []storage.WeightBand{{UpToGrams: 1000, Price: 3000}, {UpToGrams: 5000, Price: 5000}}, AdditionalPerKg: amount(700)}
	capped := storage.ShippingRate{ID: uuid.New(), Name: "capped", CODAvailable: false, Position: 2,
		WeightBands: []storage.WeightBand{{UpToGrams: 2000, Price: 2000}}, FreeAboveSubtotal: amount(100000)}
	rates := []storage.ShippingRate{flat, banded, capped}
	type option struct {
		name     string
		fee, cod int64
		free     bool
	}
	for _, c := range []struct {
		name     string
		grams    int
		subtotal int64
		method   string
		want     []option
	}{
		{"light, prepaid", 800, 50000, "instapay", []option{{"capped", 2000, 0, false}, {"banded", 3000, 0, false}, {"flat", 6000, 0, false}}},
		{"on a band's edge", 1000, 50000, "instapay", []option{{"capped", 2000, 0, false}, {"banded", 3000, 0, false}, {"flat", 6000, 0, false}}},
		{"past the last band: started kilos", 6200, 50000, "instapay", []option{{"flat", 6000, 0, false}, {"banded", 5000 + 2*700, 0, false}}},
		{"free above the subtotal", 800, 100000, "instapay", []option{{"capped", 0, 0, true}, {"banded", 3000, 0, false}, {"flat", 6000, 0, false}}},
		{"cod: fees count, no cod-less rates", 800, 50000, "cod", []option{{"banded", 3000, 500, false}, {"flat", 6000, 1500, false}}},
		{"no weight", 0, 0, "cod", []option{{"banded", 3000, 500, false}, {"flat", 6000, 1500, false}}},
		// Past MaxAmount the banded rate is not offered; it never wraps.
		{"kilos beyond any amount", 1 << 62, 50000, "instapay", []option{{"flat", 6000, 0, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []option
			for _, o := range storage.RateOptions(rates, c.grams, c.subtotal, c.method) {
				got = append(got, option{o.Name, o.Fee, o.CODFee, o.Free})
			}
			require.Equal(t, c.want, got)
		})
	}
}
