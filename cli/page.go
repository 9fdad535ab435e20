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
