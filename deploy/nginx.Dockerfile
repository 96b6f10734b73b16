# SPDX-License-Identifier: Apache-2.0
# nginx (Debian's) in front of the shlo-servers of deploy/compose.yaml.  Its
# config is written at start by deploy/nginx-conf.sh from nginx.conf.in --
# the same template the three-server test uses -- for the servers named in
# $SHLO_SERVERS.
FROM debian:12
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends nginx && \
    rm -rf /var/lib/apt/lists/*
COPY deploy/nginx.conf.in deploy/nginx-conf.sh /etc/shlo-lb/
ENV SHLO_SERVERS="shlo1:8080 shlo2:8080 shlo3:8080"
EXPOSE 8080
STOPSIGNAL SIGQUIT
CMD bash /etc/shlo-lb/nginx-conf.sh 8080 /run/shlo-lb $SHLO_SERVERS \
      >/etc/shlo-lb/nginx.conf && \
    exec nginx -e stderr -c /etc/shlo-lb/nginx.conf -g 'daemon off;'
