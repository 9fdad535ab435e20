package cli

import "github.com/gnomon-sched/gnomon/api"

// follow asks for the pages of a list until count items came or the list
// ends, and reports whether more remain past count. page asks for at most
// n items after cursor (empty: the first page) and returns how many came
// and the cursor of the next page (empty: none).
func follow(count int, page func(n int, cursor string) (int, string, error)) (bool, error) {
	cursor := ""
	for count > 0 {
		got, next, err := page(min(count, api.MaxPage), cursor)
		if err != nil {
			return false, err
		}
		count -= got
		if next == "" {
			return false, nil
		}
		cursor = next
	}
	return true, nil
}

// collect gathers up to count items page by page, as follow pages: page
// returns at most n items after cursor, and the cursor of the next page.
// next is the cursor after the last page read, more whether items remain
// past count.
func collect[T any](count int, page func(n int, cursor string) ([]T, string, error)) (all []T, next string, more bool, err error) {
	all = []T{}
	more, err = follow(count, func(n int, cursor string) (int, string, error) {
		items, nx, err := page(n, cursor)
		if err != nil {
			return 0, "", err
		}
		all, next = append(all, items...), nx
		return len(items), nx, nil
	})
	return all, next, more, err
}
