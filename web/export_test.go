package web

// IsCaseEventsPath exports isCaseEventsPath to the tests.
var IsCaseEventsPath = isCaseEventsPath
