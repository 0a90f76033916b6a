// Command dealing re-creates an oddtrick deal from its seed. It is the
// reference for anyone porting the dealing algorithm of docs/dealing.md to
// another language, and uses the Go standard library only.
//
// Usage:
//
//	go run examples/dealing/main.go SEED DEALNUMBER DEALER
//
// DEALNUMBER counts the deals of a match from 1; DEALER is N, E, S or W. It
// prints four lines, exactly as the Python rules module computes them:
//
//	N:<north> <east> <south> <west>   the deal in PBN form, North first
//	turned: <card>                    the dealer's last card (classic Whist's trumps)
//	cut: <card>                       the card a cut would draw from a second pack
//	commitment: <hex>                 SHA-256 of the seed, published before the match
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// domain separates these hashes from any other use of the seed.
const domain = "oddtrick-deal-v1"

const (
	suitLetters = "CDHS"          // suit s = 0..3: clubs, diamonds, hearts, spades
	rankLetters = "23456789TJQKA" // rank r = 0..12: two .. ace
)

// A card is its index in the unshuffled pack: suit*13 + rank,
// so 0 is the two of clubs, 12 the ace of clubs and 51 the ace of spades.
type card int

func (c card) suit() int { return int(c) / 13 }
func (c card) rank() int { return int(c) % 13 }

func (c card) String() string {
	return string(rankLetters[c.rank()]) + string(suitLetters[c.suit()])
}

// stream yields the 32-bit words of SHA-256 in counter mode for one deal:
// block c is SHA-256(domain || deal (4 bytes, big-endian) || c (4 bytes,
// big-endian) || seed as UTF-8), read as eight big-endian words.
type stream struct {
	seed    []byte
	deal    uint32
	counter uint32
	words   []uint32
}

func (s *stream) next() uint32 {
	if len(s.words) == 0 {
		msg := make([]byte, 0, len(domain)+8+len(s.seed))
		msg = append(msg, domain...)
		msg = binary.BigEndian.AppendUint32(msg, s.deal)
		msg = binary.BigEndian.AppendUint32(msg, s.counter)
		msg = append(msg, s.seed...)
		sum := sha256.Sum256(msg)
		for i := 0; i < 8; i++ {
			s.words = append(s.words, binary.BigEndian.Uint32(sum[4*i:]))
		}
		s.counter++
	}
	w := s.words[0]
	s.words = s.words[1:]
	return w
}

// draw returns a uniform integer in [0, n): words at or above the largest
// multiple of n below 2^32 are rejected, so there is no modulo bias.
func (s *stream) draw(n uint32) uint32 {
	limit := uint64(1)<<32 - (uint64(1)<<32)%uint64(n)
	for {
		w := s.next()
		if uint64(w) < limit {
			return w % n
		}
	}
}

// shuffle returns the shuffled pack and the card a cut would draw.
func shuffle(seed string, dealNumber uint32) ([52]card, card) {
	s := &stream{seed: []byte(seed), deal: dealNumber}
	var pack [52]card
	for i := range pack {
		pack[i] = card(i)
	}
	// Fisher-Yates from the top.
	for i := 51; i >= 1; i-- {
		j := s.draw(uint32(i + 1))
		pack[i], pack[j] = pack[j], pack[i]
	}
	cut := card(s.draw(52))
	return pack, cut
}

// pbnHand writes a hand spades first, suits separated by dots, ranks high to low.
func pbnHand(hand []card) string {
	sorted := append([]card(nil), hand...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] > sorted[b] })
	suits := make([]string, 4)
	for _, c := range sorted {
		suits[3-c.suit()] += string(rankLetters[c.rank()])
	}
	return strings.Join(suits, ".")
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run examples/dealing/main.go SEED DEALNUMBER DEALER")
		os.Exit(2)
	}
	seed := os.Args[1]
	number, err := strconv.ParseUint(os.Args[2], 10, 32)
	if err != nil || number < 1 {
		fmt.Fprintf(os.Stderr, "deal number must be a whole number from 1, not %q\n", os.Args[2])
		os.Exit(2)
	}
	dealer := strings.Index("NESW", strings.ToUpper(os.Args[3]))
	if len(os.Args[3]) != 1 || dealer < 0 {
		fmt.Fprintf(os.Stderr, "dealer must be N, E, S or W, not %q\n", os.Args[3])
		os.Exit(2)
	}

	pack, cut := shuffle(seed, uint32(number))
	// Position k of the shuffled pack goes to seat (dealer + 1 + k) mod 4
	// (N=0, E=1, S=2, W=3), so the dealer receives position 51.
	hands := make([][]card, 4)
	for k, c := range pack {
		seat := (dealer + 1 + k) % 4
		hands[seat] = append(hands[seat], c)
	}
	parts := make([]string, 4)
	for seat := range hands {
		parts[seat] = pbnHand(hands[seat])
	}
	commitment := sha256.Sum256([]byte(seed))
	fmt.Printf("N:%s\n", strings.Join(parts, " "))
	fmt.Printf("turned: %s\n", pack[51])
	fmt.Printf("cut: %s\n", cut)
	fmt.Printf("commitment: %s\n", hex.EncodeToString(commitment[:]))
}
