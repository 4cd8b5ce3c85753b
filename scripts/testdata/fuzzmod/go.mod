module fuzzmod

go 1.22
