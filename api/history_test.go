package api

import (
	"slices"
	"testing"
)

func TestNumberRevisionsNumbersHistoryWrittenBeforeNumbersByItsOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded []int64 // the Number each record carries, oldest first
		want     []int64
	}{
		{"none numbered", []int64{0, 0, 0}, []int64{1, 2, 3}},
		{"numbered after unnumbered", []int64{0, 0, 3, 4}, []int64{1, 2, 3, 4}},
		{"numbered, oldest pruned", []int64{4, 5}, []int64{4, 5}},
		{"empty", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			revs := make([]Revision, len(tc.recorded))
			for i, n := range tc.recorded {
				revs[i] = Revision{Number: n, Revision: int64(10 * (i + 1))}
			}
			NumberRevisions(revs)
			var got []int64
			for _, r := range revs {
				got = append(got, r.Number)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("numbers = %v, want %v", got, tc.want)
			}
		})
	}
}
