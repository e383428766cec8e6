# bash completion for topo (nodetopo), installed to /usr/share/bash-completion/completions/topo.
#
# Commands, options and their values are read from `topo ... --help` of the very binary being
# completed (CLI11's help layout: "Subcommands:" lists, option lines with TYPE:{a,b,c} choices),
# so the completion follows the program instead of a copy of its command list. Profile names for
# --mock come from `topo mock list`.

_topo_help_subcommands() {
  awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}'
}

# Option names (short and long) of a help text.
_topo_help_options() {
  awk '/^  -/ {n = split($1, names, ","); for (i = 1; i <= n; i++) print names[i]}'
}

# The value type of option $1 in a help text on stdin: its choices (a b c), or DIR, FILE, TEXT...
_topo_help_value() {
  awk -v opt="$1" '/^  -/ {
      n = split($1, names, ",")
      for (i = 1; i <= n; i++) if (names[i] == opt) {
        if ($2 ~ /^[A-Z]+:\{/) { v = $2; sub(/^[A-Z]+:\{/, "", v); sub(/\}.*/, "", v); gsub(/,/, " ", v); print "choices " v }
        else if ($2 ~ /^[A-Z]/ && $2 != "Excludes:") print $2
        else print "FLAG"
        exit
      }
    }'
}

_topo() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local topo=${COMP_WORDS[0]}
  local -a path=()
  local help subs word i
  help=$("$topo" --help 2>/dev/null) || return 0
  # The command path: words that name a subcommand of the path so far (option values are not).
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    subs=$(_topo_help_subcommands <<<"$help")
    if [[ $word != -* ]] && grep -qxF -- "$word" <<<"$subs"; then
      path+=("$word")
      help=$("$topo" "${path[@]}" --help 2>/dev/null) || return 0
    fi
  done

  if [[ $prev == -* ]]; then
    local value
    value=$(_topo_help_value "$prev" <<<"$help")
    case $value in
      choices\ *)
        mapfile -t COMPREPLY < <(compgen -W "${value#choices }" -- "$cur")
        return 0 ;;
      PROFILE)
        mapfile -t COMPREPLY < <(compgen -W "$("$topo" mock list 2>/dev/null | awk '{print $1}')" -- "$cur")
        return 0 ;;
      DIR)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return 0 ;;
      FILE)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0 ;;
      FLAG | "") ;;
      *) return 0 ;;  # a free value (TEXT, UINT): nothing to offer
    esac
  fi

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_topo_help_options <<<"$help")" -- "$cur")
    return 0
  fi
  subs=$(_topo_help_subcommands <<<"$help")
  if [[ -n $subs ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")  # positional arguments (PROFILE DIR, FILE)
  fi
  return 0
}
complete -F _topo topo
