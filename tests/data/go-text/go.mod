module gotext

go 1.19
