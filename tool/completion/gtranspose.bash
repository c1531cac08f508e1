# bash completion for gtranspose: its options (read from its own --help, so
# they never drift), the values of the options that take a word, files, and
# FILE.h5:/dataset for the 2-D datasets of an HDF5 file (asked of gtranspose
# itself: gtranspose --list-datasets FILE). Installed where bash-completion
# looks (share/bash-completion/completions); needs nothing of it.

# The word being completed, whole: bash splits "a.h5:/x" at the ':' (it is in
# COMP_WORDBREAKS), so the line up to the cursor is read back to its last blank.
_gtranspose_word() {
  local line=${COMP_LINE:0:COMP_POINT}
  printf '%s' "${line##*[[:blank:]]}"
}

# COMPREPLY from candidates for the whole word `cur`: where bash split the word
# at a ':', it replaces only what follows the last one, so each candidate
# loses what precedes it (as bash-completion's __ltrim_colon_completions does).
_gtranspose_reply() {
  local cur=$1 c
  shift
  COMPREPLY=()
  for c in "$@"; do
    [[ $c == "$cur"* ]] || continue
    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then c=${c#"${cur%"${cur##*:}"}"}; fi
    COMPREPLY+=("$c")
  done
}

_gtranspose() {
  local cmd=${COMP_WORDS[0]} cur prev
  cur=$(_gtranspose_word)
  prev=${COMP_WORDS[COMP_CWORD-1]}
  [[ $prev == : ]] && prev=${COMP_WORDS[COMP_CWORD-2]}
  local IFS=$'\n'
  case $prev in
    --engine) _gtranspose_reply "$cur" auto cuda cpu; return ;;
    --format) _gtranspose_reply "$cur" raw npy hdf5; return ;;
    --dtype)
      # The names the help lists after "element type ...: ".
      local names
      names=$("$cmd" --help 2>/dev/null | sed -n 's/.*--dtype.*element type[^:]*: \(.*\)$/\1/p' | tr ' ' '\n')
      _gtranspose_reply "$cur" $names; return ;;
    --kernel)
      _gtranspose_reply "$cur" auto all $("$cmd" --list-kernels 2>/dev/null | awk '{print $1}'); return ;;
    --host-modes) _gtranspose_reply "$cur" pinned pageable inplace-pinned inplace-pageable; return ;;
    --shape|--host-mem|--device-mem|--tile|--chunk|--threads|--streams|--reps|--warmup|--seed|--random-shapes)
      COMPREPLY=(); return ;;
  esac
  if [[ $cur == -* ]]; then
    _gtranspose_reply "$cur" $("$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    return
  fi
  # FILE:/dataset, or FILE of an HDF5 file: its 2-D datasets.
  local file=${cur%%:*}
  if [[ -f $file ]] && { [[ $cur == *:* ]] || [[ $file == *.h5 || $file == *.hdf5 || $file == *.nc ]]; }; then
    local ds
    ds=$("$cmd" --list-datasets "$file" 2>/dev/null)
    if [[ -n $ds ]]; then
      _gtranspose_reply "$cur" $(printf '%s\n' $ds | sed "s|^|$file:|")
      [[ $cur == *:* ]] && { compopt -o nospace 2>/dev/null; return; }
    fi
  fi
  [[ $cur == *:* ]] && return
  COMPREPLY+=($(compgen -f -- "$cur"))
  compopt -o filenames 2>/dev/null
}

complete -F _gtranspose gtranspose
