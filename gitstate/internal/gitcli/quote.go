package gitcli

import "strings"

// UnquoteC reads a string git quoted in C style ("a\tb\"c\303\251"):
// the escapes \a \b \f \n \r \t \v \\ \" and three octal digits. ok
// is false when q is not one such string and nothing else.
func UnquoteC(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '"':
			return b.String(), i == len(q)-1
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(q) {
			return "", false
		}
		switch c = q[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"':
			b.WriteByte(c)
		case '0', '1', '2', '3':
			if i+2 >= len(q) || q[i+1] < '0' || q[i+1] > '7' || q[i+2] < '0' || q[i+2] > '7' {
				return "", false
			}
			b.WriteByte((c-'0')<<6 | (q[i+1]-'0')<<3 | (q[i+2] - '0'))
			i += 2
		default:
			return "", false
		}
	}
	return "", false
}
