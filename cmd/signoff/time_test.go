package main_test

import "time"

func timeMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
