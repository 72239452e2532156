module flamesite.test/pprofgen

go 1.19
