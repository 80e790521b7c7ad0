package fakeapi

// Fast acceptance checks for the names and label strings validateMeta validates. Each returns
// true only for values that apimachinery's regexp-based validator (k8s.io/apimachinery
// pkg/util/validation) accepts, so a caller may skip the validator when it returns true and must
// call it (for the exact messages) otherwise. names_test.go checks the equivalence.

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }

// isDNS1123Label: 1 to 63 characters of [-a-z0-9], starting and ending alphanumeric.
func isDNS1123Label(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// isDNS1035Label: a DNS-1123 label that starts with a letter.
func isDNS1035Label(s string) bool {
	return isDNS1123Label(s) && s[0] >= 'a' && s[0] <= 'z'
}

// isDNS1123Subdomain: 1 to 253 characters, DNS-1123 labels (of any length) joined by dots.
func isDNS1123Subdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		switch c := s[i]; {
		case isLowerAlnum(c), c == '-':
		case c == '.':
			if !isLowerAlnum(s[i-1]) || !isLowerAlnum(s[i+1]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isLabelName: 1 to 63 characters of [-A-Za-z0-9_.], starting and ending alphanumeric.
func isLabelName(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isSimpleLabelKey accepts qualified names without a prefix; keys with a "/" prefix are left to
// the validator.
func isSimpleLabelKey(s string) bool { return isLabelName(s) }

// isLabelValue: empty, or a label name.
func isLabelValue(s string) bool { return s == "" || isLabelName(s) }
