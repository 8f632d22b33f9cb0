package airlock

import (
	"slices"
	"testing"
)

func TestTopLevelAlternatives(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want []string
	}{
		{`a|b|c`, []string{"a", "b", "c"}},
		{`(?:a|b)x|y`, []string{"(?:a|b)x", "y"}},
		{`(?:a|b|c)`, []string{"a", "b", "c"}},
		{`(?:a|b)(?:c|d)`, nil},
		{`[|]x|y`, []string{"[|]x", "y"}},
		{`[]|]x|y`, []string{"[]|]x", "y"}},
		{`[^]|]x|y`, []string{"[^]|]x", "y"}},
		{`\|x|y`, []string{`\|x`, "y"}},
		{`[[:alpha:]|]x|y`, []string{"[[:alpha:]|]x", "y"}},
		{`ab`, nil},
		{`(a|b`, nil},
		{`[a|b`, nil},
	}
	for _, tc := range cases {
		if got := topLevelAlternatives(tc.src); !slices.Equal(got, tc.want) {
			t.Errorf("topLevelAlternatives(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
