module sandbox-projects/toolchain/shapegen

go 1.26.3
