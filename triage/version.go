package triage

import (
	"strconv"
	"strings"
	"unicode"
)

// CompareVersions compares two app versions the way people write them:
// "2.4.1", "v2.4", "2.10" > "2.9", "2.4" == "2.4.0", and a pre-release
// ("2.5.0-beta.1") sorts before its release. It returns -1, 0 or +1. A
// version that has no leading number sorts before every version that has
// one, and two such versions compare as strings.
func CompareVersions(a, b string) int {
	na, pa := splitVersion(a)
	nb, pb := splitVersion(b)
	if len(na) == 0 || len(nb) == 0 {
		switch {
		case len(na) == 0 && len(nb) == 0:
			return sign(strings.Compare(strings.ToLower(a), strings.ToLower(b)))
		case len(na) == 0:
			return -1
		default:
			return 1
		}
	}
	for i := 0; i < max(len(na), len(nb)); i++ {
		var x, y int
		if i < len(na) {
			x = na[i]
		}
		if i < len(nb) {
			y = nb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	}
	return comparePre(pa, pb)
}

// IsVersion reports whether s starts like a version number ("2", "v2.4.1").
func IsVersion(s string) bool {
	n, _ := splitVersion(s)
	return len(n) > 0
}

// splitVersion returns the numeric release parts and the pre-release tag.
func splitVersion(v string) ([]int, string) {
	v = strings.TrimSpace(strings.ToLower(v))
	v = strings.TrimPrefix(v, "version")
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexByte(v, '+'); i >= 0 { // build metadata never orders
		v = v[:i]
	}
	var nums []int
	i := 0
	for i < len(v) {
		j := i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		if j == i {
			break
		}
		n, err := strconv.Atoi(v[i:j])
		if err != nil {
			break
		}
		nums = append(nums, n)
		i = j
		if i < len(v) && v[i] == '.' && i+1 < len(v) && unicode.IsDigit(rune(v[i+1])) {
			i++
			continue
		}
		break
	}
	pre := strings.TrimLeft(v[i:], "-._ ")
	return nums, pre
}

// comparePre orders pre-release tags by their dot-separated identifiers,
// numbers numerically and below words, as semver does.
func comparePre(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < min(len(as), len(bs)); i++ {
		x, errx := strconv.Atoi(as[i])
		y, erry := strconv.Atoi(bs[i])
		switch {
		case errx == nil && erry == nil:
			if x != y {
				return sign(x - y)
			}
		case errx == nil:
			return -1
		case erry == nil:
			return 1
		default:
			if c := strings.Compare(as[i], bs[i]); c != 0 {
				return c
			}
		}
	}
	return sign(len(as) - len(bs))
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
