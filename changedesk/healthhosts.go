package changedesk

// healthHosts are the hosts besides loopback d's health prober reaches
// (SIGNOFF_HEALTH_HOSTS): the review's health_host rule checks a plan's
// probe against the same list, so a plan the prober would refuse when it
// dials fails review instead of being approved and rolled back.
func (d *Desk) healthHosts() []string {
	if h, ok := d.Health.(interface{ HealthHosts() []string }); ok {
		return h.HealthHosts()
	}
	return nil
}
