package api

import "testing"

// The opt-out keywords of decisions §25 are read however a buyer types
// them; anything else is a message, not an opt-out.
func TestIsOptOutKeyword(t *testing.T) {
	for text, want := range map[string]bool{
		"STOP": true, " stop ": true, "Stop": true, "إيقاف": true, "ايقاف": true, "أيقاف": true, "الغاء": true, "إلغاء": true,
		"الغاءْ": true, "توقف": true, "تـوقـف": true, "تَوَقَّف": true,
		"stop please": false, "": false, "الغاء الطلب": false, "نعم": false, "STOPP": false,
	} {
		if got := isOptOutKeyword(text); got != want {
			t.Errorf("isOptOutKeyword(%q) = %v, want %v", text, got, want)
		}
	}
}
