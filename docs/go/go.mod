module example.invalid/boo-normalize-go

go 1.19
