{{ .kapp.vars.tf_vars | toPrettyJson }}
