package shoplite

import "context"

// BuildMain writes ShopLite into dir like Build, but with the main branch
// only: the shop as deployed, without the reproduction and fix branches
// (in the demo, fixes arrive as proposals). main's commit is the same as
// Build's.
func BuildMain(ctx context.Context, dir string) (*Sample, error) {
	main, _ := lookup(BranchMain)
	return build(ctx, dir, []Branch{main})
}
