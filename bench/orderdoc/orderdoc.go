// Package orderdoc makes realistic order documents for benchmarks and load
// runs: about 1 KB each (orderId, customerId, status, decimal amount,
// currency, qty, priority, express, ISO date-time createdAt, a 300-400
// character note, shipping and billing addresses, three tags and three
// order lines), every value varying with the document's number. Varied
// documents add fields whose names and types change as the numbers grow,
// so ingesting them keeps extending the model.
package orderdoc

import "strconv"

var (
	statuses  = []string{"NEW", "PAID", "PACKED", "SHIPPED", "DELIVERED"}
	cities    = []string{"Springfield", "Shelbyville", "Ogdenville", "North Haverbrook", "Capital City"}
	countries = []string{"US", "DE", "FR", "GB", "NL"}
	words     = []string{"please ", "leave ", "the ", "parcel ", "at ", "the ", "back ", "door ", "call ", "before ", "delivery ", "fragile ", "gift ", "wrap "}
)

// Append writes order i to b.
func Append(b []byte, i int) []byte {
	return append(appendOrder(b, i), '}')
}

// AppendVaried writes order i with an "ext" object whose groups appear one
// per 1000 documents (up to 100) and whose fields' types rotate, so a model
// fed these keeps growing for the first 100,000 documents.
func AppendVaried(b []byte, i int) []byte {
	b = appendOrder(b, i)
	b = append(b, `,"ext":{"g`...)
	b = strconv.AppendInt(b, int64(i/1000%100), 10)
	b = append(b, `":{"f`...)
	b = strconv.AppendInt(b, int64(i%20), 10)
	b = append(b, `":`...)
	switch i % 3 {
	case 0:
		b = strconv.AppendInt(b, int64(i), 10)
	case 1:
		b = append(b, `"v`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '"')
	default:
		b = strconv.AppendBool(b, i%2 == 0)
	}
	return append(b, "}}}"...)
}

func appendOrder(b []byte, i int) []byte {
	b = append(b, `{"orderId":"ORD-`...)
	b = appendPadded(b, i, 9)
	b = append(b, `","customerId":"CUST-`...)
	b = appendPadded(b, i*7919%100000, 5)
	b = append(b, `","status":"`...)
	b = append(b, statuses[i%len(statuses)]...)
	b = append(b, `","amount":`...)
	b = strconv.AppendInt(b, int64(10+i*37%99000), 10)
	b = append(b, '.')
	b = appendPadded(b, i*13%100, 2)
	b = append(b, `,"currency":"`...)
	b = append(b, []string{"EUR", "USD", "GBP"}[i%3]...)
	b = append(b, `","qty":`...)
	b = strconv.AppendInt(b, int64(1+i%12), 10)
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, int64(i%5), 10)
	b = append(b, `,"express":`...)
	b = strconv.AppendBool(b, i%4 == 0)
	b = append(b, `,"createdAt":"2026-`...)
	b = appendPadded(b, 1+i%12, 2)
	b = append(b, '-')
	b = appendPadded(b, 1+i%28, 2)
	b = append(b, 'T')
	b = appendPadded(b, i%24, 2)
	b = append(b, ':')
	b = appendPadded(b, i%60, 2)
	b = append(b, ':')
	b = appendPadded(b, i*7%60, 2)
	b = append(b, `.123Z","notes":"`...)
	n := 300 + i%100
	for k := 0; n > 0; k++ {
		w := words[(i+k)%len(words)]
		if len(w) > n {
			w = w[:n]
		}
		b = append(b, w...)
		n -= len(w)
	}
	b = append(b, `","shipping":`...)
	b = appendAddress(b, i)
	b = append(b, `,"billing":`...)
	b = appendAddress(b, i*31)
	b = append(b, `,"tags":["t`...)
	b = strconv.AppendInt(b, int64(i%17), 10)
	b = append(b, `","t`...)
	b = strconv.AppendInt(b, int64(i%23), 10)
	b = append(b, `","t`...)
	b = strconv.AppendInt(b, int64(i%29), 10)
	b = append(b, `"],"lines":[`...)
	for l := 0; l < 3; l++ {
		if l > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"sku":"SKU-`...)
		b = appendPadded(b, (i+l*1009)%100000, 5)
		b = append(b, `","qty":`...)
		b = strconv.AppendInt(b, int64(1+(i+l)%6), 10)
		b = append(b, `,"price":`...)
		b = strconv.AppendInt(b, int64(1+(i*3+l)%500), 10)
		b = append(b, '.')
		b = appendPadded(b, (i+l*7)%100, 2)
		b = append(b, `,"desc":"item `...)
		b = strconv.AppendInt(b, int64((i+l)%1000), 10)
		b = append(b, ` of the catalogue"}`...)
	}
	return append(b, ']')
}

func appendAddress(b []byte, i int) []byte {
	b = append(b, `{"name":"Customer `...)
	b = strconv.AppendInt(b, int64(i%100000), 10)
	b = append(b, `","street":"`...)
	b = strconv.AppendInt(b, int64(1+i%999), 10)
	b = append(b, ` Evergreen Terrace","city":"`...)
	b = append(b, cities[i%len(cities)]...)
	b = append(b, `","zip":"`...)
	b = appendPadded(b, i*17%100000, 5)
	b = append(b, `","country":"`...)
	b = append(b, countries[i%len(countries)]...)
	return append(b, `"}`...)
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.AppendInt(nil, int64(v), 10)
	for k := len(s); k < width; k++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
